import type { TaskStatus } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';

/** A task as GET /api/project/{id}/tasks/… returns it (SPEC §3). */
export type Task = {
  id: number;
  template_id: number;
  project_id: number;
  status: TaskStatus | string;
  message: string;
  user_id: number | null;
  integration_id?: number | null;
  created?: string;
  start: string | null;
  end: string | null;
  version: string | null;
  build_task_id?: number | null;
  tpl_type?: string;
  tpl_alias?: string;
  tpl_playbook?: string;
  user_name?: string | null;
  commit_hash?: string | null;
  commit_message?: string | null;
};

export type TaskOutputLine = { id?: number; task_id?: number; time: string; output: string };

export const taskKeys = {
  history: (projectId: number) => ['project', projectId, 'tasks', 'last'] as const,
  task: (projectId: number, taskId: number) => ['project', projectId, 'task', taskId] as const,
};

export const HISTORY_LIMIT = 200;

export const useTaskHistory = (projectId: number) =>
  useQuery({
    queryKey: taskKeys.history(projectId),
    queryFn: () => api<Task[]>(`/project/${projectId}/tasks/last?limit=${HISTORY_LIMIT}`),
  });

export const useTask = (projectId: number, taskId: number) =>
  useQuery({
    queryKey: taskKeys.task(projectId, taskId),
    queryFn: () => api<Task>(`/project/${projectId}/tasks/${taskId}`),
    retry: false,
  });

export function useTaskAction(projectId: number, taskId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ action, force }: { action: 'stop' | 'confirm' | 'reject'; force?: boolean }) =>
      api(`/project/${projectId}/tasks/${taskId}/${action}`, {
        method: 'POST',
        body: action === 'stop' ? { force: !!force } : {},
      }),
    onSuccess: () => void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) }),
  });
}

export const outputPath = (projectId: number, taskId: number, offset: number, limit: number) =>
  `/project/${projectId}/tasks/${taskId}/output?offset=${offset}&limit=${limit}`;
