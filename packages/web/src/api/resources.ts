import type { Refs } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from './client';

/** Query keys of the project resources; mutations invalidate by the collection key. */
export const resourceKey = (projectId: number, collection: string) =>
  ['project', projectId, collection] as const;

/** GET /api/project/{id}/{collection}: a full list (these tables have no paging). */
export function useResourceList<T>(projectId: number, collection: string, enabled = true) {
  return useQuery({
    queryKey: resourceKey(projectId, collection),
    queryFn: () => api<T[]>(`/project/${projectId}/${collection}`),
    enabled,
  });
}

/** POST a new item or PUT an existing one, with project_id in the body. */
export function useResourceSave<T extends { id?: number | null }>(
  projectId: number,
  collection: string,
  extraKeys: string[] = [],
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (item: T) => {
      const body = { ...item, project_id: projectId };
      if (item.id) {
        await api(`/project/${projectId}/${collection}/${item.id}`, { method: 'PUT', body });
        return item as T & { id: number };
      }
      return api<T & { id: number }>(`/project/${projectId}/${collection}`, { method: 'POST', body });
    },
    onSuccess: () => {
      for (const key of [collection, ...extraKeys])
        void client.invalidateQueries({ queryKey: resourceKey(projectId, key) });
    },
  });
}

export function useResourceDelete(projectId: number, collection: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api(`/project/${projectId}/${collection}/${id}`, { method: 'DELETE' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: resourceKey(projectId, collection) }),
  });
}

export const fetchRefs = (projectId: number, collection: string, id: number) =>
  api<Partial<Refs>>(`/project/${projectId}/${collection}/${id}/refs`);

/** Whether a refs answer names anything that uses the object. */
export const hasRefs = (refs: Partial<Refs> | null | undefined): refs is Partial<Refs> =>
  !!refs && Object.values(refs).some((list) => Array.isArray(list) && list.length > 0);
