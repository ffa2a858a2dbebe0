import type { Template, View } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { resourceKey } from '../../api/resources';
import type { Task } from '../tasks';

export const templateKeys = {
  all: (projectId: number) => resourceKey(projectId, 'templates'),
  list: (projectId: number, viewId: number | null) =>
    [...resourceKey(projectId, 'templates'), 'list', viewId ?? 'all'] as const,
  one: (projectId: number, id: number) => [...resourceKey(projectId, 'templates'), 'one', id] as const,
  tasks: (projectId: number, id: number, limit: number) =>
    [...resourceKey(projectId, 'templates'), 'tasks', id, limit] as const,
  views: (projectId: number) => resourceKey(projectId, 'views'),
};

export const useTemplates = (projectId: number, viewId: number | null) =>
  useQuery({
    queryKey: templateKeys.list(projectId, viewId),
    queryFn: () =>
      api<Template[]>(
        viewId ? `/project/${projectId}/views/${viewId}/templates` : `/project/${projectId}/templates`,
      ),
  });

export const useTemplate = (projectId: number, id: number, enabled = true) =>
  useQuery({
    queryKey: templateKeys.one(projectId, id),
    queryFn: () => api<Template>(`/project/${projectId}/templates/${id}`),
    enabled: enabled && id > 0,
    retry: false,
  });

/** The last tasks of a template (expanded rows show 5, the detail page more). */
export const useTemplateTasks = (projectId: number, id: number, limit: number, enabled = true) =>
  useQuery({
    queryKey: templateKeys.tasks(projectId, id, limit),
    queryFn: () => api<Task[]>(`/project/${projectId}/templates/${id}/tasks/last?limit=${limit}`),
    enabled,
  });

export const useViews = (projectId: number) =>
  useQuery({
    queryKey: templateKeys.views(projectId),
    queryFn: async () =>
      (await api<View[]>(`/project/${projectId}/views`)).sort(
        (a, b) => a.position - b.position || a.id - b.id,
      ),
  });

export function useTemplateMutations(projectId: number) {
  const client = useQueryClient();
  const invalidate = () => void client.invalidateQueries({ queryKey: templateKeys.all(projectId) });
  return {
    save: useMutation({
      mutationFn: async (body: Record<string, unknown> & { id?: number | null }) => {
        const payload = { ...body, project_id: projectId };
        if (body.id) {
          await api(`/project/${projectId}/templates/${body.id}`, { method: 'PUT', body: payload });
          return { ...body, id: body.id } as unknown as Template;
        }
        return api<Template>(`/project/${projectId}/templates`, { method: 'POST', body: payload });
      },
      onSuccess: () => {
        invalidate();
        void client.invalidateQueries({ queryKey: resourceKey(projectId, 'schedules') });
      },
    }),
    remove: useMutation({
      mutationFn: (id: number) => api(`/project/${projectId}/templates/${id}`, { method: 'DELETE' }),
      onSuccess: invalidate,
    }),
  };
}

export function useViewMutations(projectId: number) {
  const client = useQueryClient();
  const invalidate = () => void client.invalidateQueries({ queryKey: templateKeys.views(projectId) });
  return {
    create: useMutation({
      mutationFn: (body: { title: string; position: number }) =>
        api<View>(`/project/${projectId}/views`, {
          method: 'POST',
          body: { ...body, project_id: projectId },
        }),
      onSuccess: invalidate,
    }),
    rename: useMutation({
      mutationFn: (view: View) =>
        api(`/project/${projectId}/views/${view.id}`, {
          method: 'PUT',
          body: { title: view.title, position: view.position, project_id: projectId },
        }),
      onSuccess: invalidate,
    }),
    remove: useMutation({
      mutationFn: (id: number) => api(`/project/${projectId}/views/${id}`, { method: 'DELETE' }),
      onSuccess: invalidate,
    }),
    positions: useMutation({
      mutationFn: (ids: number[]) =>
        api(`/project/${projectId}/views/positions`, {
          method: 'POST',
          body: Object.fromEntries(ids.map((id, position) => [String(id), position])),
        }),
      onSuccess: invalidate,
    }),
  };
}

/** What the run button says, by template type. */
export const runLabelKey = (type: string) =>
  type === 'build' ? 'run.build' : type === 'deploy' ? 'run.deploy' : 'run.run';
export const rerunLabelKey = (type: string) =>
  type === 'build' ? 'run.rebuild' : type === 'deploy' ? 'run.redeploy' : 'run.rerun';

/** Local preferences of the templates list: last visited view per project, hidden columns per user. */
const viewPrefKey = (projectId: number) => `templates.view.${projectId}`;
export const columnsPrefKey = (userId: number) => `templates.columns.${userId}`;

export function readLocal(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
export function writeLocal(key: string, value: string | null) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage disabled: the preference lasts for this page only.
  }
}
export const readLastView = (projectId: number) => Number(readLocal(viewPrefKey(projectId))) || null;
export const writeLastView = (projectId: number, viewId: number | null) =>
  writeLocal(viewPrefKey(projectId), viewId ? String(viewId) : null);
