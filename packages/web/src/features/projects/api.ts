import type { Project } from '@signalbox/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { sessionKeys } from '../../api/session';

export type ProjectValues = {
  name: string;
  alert: boolean;
  alert_chat: string | null;
  max_parallel_tasks: number;
  /** Only the settings page edits it; absent from the new-project form (the server then stores 0). */
  task_retention_days?: number;
  /** Only the settings page edits it; a new project asks for approval of agents' runs. */
  agent_runs_need_approval?: boolean;
};

export function useCreateProject() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: Partial<ProjectValues> & { demo?: boolean }) =>
      api<Project>('/projects', { method: 'POST', body }),
    onSuccess: () => void client.invalidateQueries({ queryKey: sessionKeys.projects }),
  });
}

export function useRestoreProject() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (text: string) =>
      api<Project>('/projects/restore', { method: 'POST', body: text, raw: true }),
    onSuccess: () => void client.invalidateQueries({ queryKey: sessionKeys.projects }),
  });
}

export function useSaveProject(id: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (values: ProjectValues & { type: string }) =>
      api(`/project/${id}`, { method: 'PUT', body: { ...values, id } }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: sessionKeys.projects });
      void client.invalidateQueries({ queryKey: sessionKeys.project(id) });
    },
  });
}

export function useDeleteProject(id: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => api(`/project/${id}`, { method: 'DELETE' }),
    onSuccess: () => {
      client.removeQueries({ queryKey: sessionKeys.project(id) });
      void client.invalidateQueries({ queryKey: sessionKeys.projects });
    },
  });
}
