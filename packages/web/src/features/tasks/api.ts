import type { ErrorBody, TaskPlan, TaskStatus } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, apiUrl } from '../../api/client';

/** A task as GET /api/project/{id}/tasks/… returns it. */
export type Task = {
  id: number;
  template_id: number;
  project_id: number;
  status: TaskStatus | string;
  /** Why a waiting task waits (no runner with its tag is online, the project's limit…); null otherwise. */
  status_detail?: string | null;
  message: string;
  user_id: number | null;
  integration_id?: number | null;
  schedule_id?: number | null;
  /** How it was started (mcp: by an AI agent); null for tasks stored before it was recorded. */
  source?: string | null;
  created?: string;
  start: string | null;
  end: string | null;
  version: string | null;
  build_task_id?: number | null;
  tpl_type?: string;
  tpl_app?: string;
  tpl_alias?: string;
  tpl_playbook?: string;
  user_name?: string | null;
  commit_hash?: string | null;
  commit_message?: string | null;
  /** The remote runner it was given to (name null once deleted); null: the server runs it. */
  runner?: { id: number; name: string | null } | null;
  /** What the task ran with (a re-run starts from them). */
  environment?: string;
  arguments?: string | null;
  git_branch?: string | null;
  inventory_id?: number | null;
  /** The environment it ran with instead of its template's; null: the template's. */
  environment_id?: number | null;
  params?: Record<string, unknown>;
  debug?: boolean;
  dry_run?: boolean;
  diff?: boolean;
  /** The values the task published (SIGNALBOX_OUTPUTS), and the names of its secret ones (never their values). */
  outputs?: Record<string, unknown>;
  secret_outputs?: string[];
  /** The workflow run (and its node) that started the task; null: none. */
  workflow_run_id?: number | null;
  workflow_node_id?: string | null;
};

/** `line`: the line's 1-based position in the log (line n is at offset n - 1). */
export type TaskOutputLine = { id: number; task_id: number; time: string; output: string; line?: number };

export const taskKeys = {
  history: (projectId: number) => ['project', projectId, 'tasks', 'last'] as const,
  task: (projectId: number, taskId: number) => ['project', projectId, 'task', taskId] as const,
};

export const HISTORY_LIMIT = 200;

/** The apps whose tasks plan (a saved Terraform plan) and so may have a plan summary. */
export const planningApps: readonly string[] = ['terraform', 'tofu', 'terragrunt'];

/**
 * GET tasks/{id}/plan: the summary of the task's saved plan, null when it has none. Read again as the task's status
 * changes (the summary is kept before the task waits for confirmation); off while `enabled` is false.
 */
export const useTaskPlan = (projectId: number, taskId: number, status: string, enabled: boolean) =>
  useQuery({
    queryKey: [...taskKeys.task(projectId, taskId), 'plan', status] as const,
    enabled,
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: async () => {
      try {
        return await api<TaskPlan>(`/project/${projectId}/tasks/${taskId}/plan`);
      } catch (err) {
        if (err instanceof ApiError && err.body?.code === 'task_has_no_plan') return null;
        throw err;
      }
    },
  });

export const useTaskHistory = (projectId: number) =>
  useQuery({
    queryKey: taskKeys.history(projectId),
    queryFn: () => api<Task[]>(`/project/${projectId}/tasks/last?limit=${HISTORY_LIMIT}`),
  });

/**
 * Stop, confirm or reject a task. A confirmation names the digest of the plan the user read (`digest`): the server
 * refuses it when the plan is another.
 */
export function useTaskAction(projectId: number, taskId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({
      action,
      force,
      digest,
    }: {
      action: 'stop' | 'confirm' | 'reject';
      force?: boolean;
      digest?: string | null;
    }) =>
      api(`/project/${projectId}/tasks/${taskId}/${action}`, {
        method: 'POST',
        body:
          action === 'stop'
            ? { force: !!force }
            : action === 'confirm' && digest
              ? { plan_digest: digest }
              : {},
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) }),
  });
}

/** Apply this plan: approves a plan-only task's stored plan (the digest read) and starts the task applying it. */
export function useApplyPlan(projectId: number, taskId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (digest: string) =>
      api<Task>(`/project/${projectId}/tasks/${taskId}/apply_plan`, {
        method: 'POST',
        body: { plan_digest: digest },
      }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
      void client.invalidateQueries({ queryKey: taskKeys.history(projectId) });
    },
  });
}

/** One page of a task's stored log: the lines from line `offset` on, and whether the server links a next page. */
export type OutputPage = { rows: TaskOutputLine[]; more: boolean };

/**
 * GET tasks/{id}/output?offset=&limit=: the server answers at most `limit` lines from the `offset`-th (0-based;
 * fewer when they are long) and a `Link: <…>; rel="next"` header while lines follow, so the caller pages on until
 * `more` is false.
 */
export async function fetchOutputPage(
  projectId: number,
  taskId: number,
  offset: number,
  limit: number,
): Promise<OutputPage> {
  const path = `/project/${projectId}/tasks/${taskId}/output?offset=${offset}&limit=${limit}`;
  let response: Response;
  try {
    response = await fetch(apiUrl(path), {
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new ApiError(0, (err as Error).message || 'Network error');
  }
  if (!response.ok) {
    const body = (await response.json().catch(() => null)) as ErrorBody | null;
    throw new ApiError(
      response.status,
      body?.error || `${response.status} ${response.statusText}`.trim(),
      body ?? undefined,
    );
  }
  const rows = (await response.json()) as TaskOutputLine[];
  return { rows, more: /;\s*rel="next"/.test(response.headers.get('link') ?? '') };
}
