import type {
  ApprovalInboxItem,
  Workflow,
  WorkflowInput,
  WorkflowRun,
  WorkflowRunSummary,
} from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { useLiveConnection, useLiveMessages, useWorkflowRunMessages } from '../../api/live';

/** Query keys of workflows; a run's key sits under its project's runs, so one invalidation covers both. */
export const workflowKeys = {
  list: (projectId: number) => ['project', projectId, 'workflows'] as const,
  one: (projectId: number, id: number) => ['project', projectId, 'workflows', id] as const,
  runs: (projectId: number) => ['project', projectId, 'workflow-runs'] as const,
  runsOf: (projectId: number, workflowId: number) =>
    ['project', projectId, 'workflow-runs', 'of', workflowId] as const,
  run: (projectId: number, runId: number) => ['project', projectId, 'workflow-runs', runId] as const,
  inbox: ['approvals', 'inbox'] as const,
};

export const useWorkflows = (projectId: number) =>
  useQuery({
    queryKey: workflowKeys.list(projectId),
    queryFn: () => api<Workflow[]>(`/project/${projectId}/workflows`),
  });

export const useWorkflow = (projectId: number, id: number, enabled = true) =>
  useQuery({
    queryKey: workflowKeys.one(projectId, id),
    queryFn: () => api<Workflow>(`/project/${projectId}/workflows/${id}`),
    enabled: enabled && id > 0,
  });

/** What the editor sends: the contract's input, node positions left to the automatic layout. */
export type WorkflowBody = Pick<WorkflowInput, 'name' | 'description'> & {
  survey_vars: unknown[];
  nodes: unknown[];
  edges: unknown[];
};

export function useWorkflowSave(projectId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: number | null; body: WorkflowBody }) =>
      id
        ? api<Workflow>(`/project/${projectId}/workflows/${id}`, { method: 'PUT', body })
        : api<Workflow>(`/project/${projectId}/workflows`, { method: 'POST', body }),
    onSuccess: (saved) => {
      client.setQueryData(workflowKeys.one(projectId, saved.id), saved);
      void client.invalidateQueries({ queryKey: workflowKeys.list(projectId), exact: true });
    },
  });
}

export function useWorkflowDelete(projectId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api(`/project/${projectId}/workflows/${id}`, { method: 'DELETE' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: workflowKeys.list(projectId) }),
  });
}

export const useWorkflowRuns = (projectId: number, workflowId: number) =>
  useQuery({
    queryKey: workflowKeys.runsOf(projectId, workflowId),
    queryFn: () =>
      api<WorkflowRunSummary[]>(`/project/${projectId}/workflow-runs?workflow_id=${workflowId}&limit=200`),
  });

export const useWorkflowRun = (projectId: number, runId: number) =>
  useQuery({
    queryKey: workflowKeys.run(projectId, runId),
    queryFn: () => api<WorkflowRun>(`/project/${projectId}/workflow-runs/${runId}`),
  });

/** Re-reads the project's workflows and runs when a run of it changes, and after the socket reconnects. */
export function useLiveWorkflowRuns(projectId: number) {
  const client = useQueryClient();
  const refresh = () => {
    void client.invalidateQueries({ queryKey: workflowKeys.runs(projectId) });
    void client.invalidateQueries({ queryKey: workflowKeys.list(projectId), exact: true });
  };
  useWorkflowRunMessages((m) => {
    if (m.project_id === projectId) refresh();
  });
  useLiveConnection(refresh);
}

/** The run actions (start, stop, re-run, approve, reject): each answers the run, which replaces the cached one. */
export function useRunAction(projectId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ path, body }: { path: string; body?: unknown }) =>
      api<WorkflowRun>(`/project/${projectId}/${path}`, { method: 'POST', body: body ?? {} }),
    onSuccess: (run) => {
      client.setQueryData(workflowKeys.run(projectId, run.id), run);
      void client.invalidateQueries({ queryKey: workflowKeys.runs(projectId) });
      void client.invalidateQueries({ queryKey: workflowKeys.list(projectId), exact: true });
      void client.invalidateQueries({ queryKey: workflowKeys.inbox });
    },
  });
}

export const runPaths = {
  start: (workflowId: number) => `workflows/${workflowId}/runs`,
  stop: (runId: number) => `workflow-runs/${runId}/stop`,
  rerun: (runId: number) => `workflow-runs/${runId}/rerun`,
  approve: (runId: number, nodeId: string) =>
    `workflow-runs/${runId}/nodes/${encodeURIComponent(nodeId)}/approve`,
  reject: (runId: number, nodeId: string) =>
    `workflow-runs/${runId}/nodes/${encodeURIComponent(nodeId)}/reject`,
};

/** GET /api/approvals: what waits for the signed-in user across projects; follows runs and tasks live. */
export function useApprovalInbox() {
  const client = useQueryClient();
  const refresh = () => void client.invalidateQueries({ queryKey: workflowKeys.inbox });
  // Any change of a workflow run may open or close an approval (a run whose other branch still runs says
  // `running`).
  useWorkflowRunMessages(refresh);
  // A task's update reloads it only when the task starts waiting for approval or is in it: every console shows
  // the badge, and a busy project changes task statuses many times a second.
  useLiveMessages((m) => {
    if (m.type !== 'update') return;
    const listed = client.getQueryData<ApprovalInboxItem[]>(workflowKeys.inbox) ?? [];
    if (m.status === 'waiting_approval' || listed.some((item) => item.task_id === m.task_id)) refresh();
  });
  useLiveConnection(refresh);
  return useQuery({
    queryKey: workflowKeys.inbox,
    queryFn: () => api<ApprovalInboxItem[]>('/approvals'),
  });
}
