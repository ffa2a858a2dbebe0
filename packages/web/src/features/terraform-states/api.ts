import type { StateDetail, StateDiff, StateSummary } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';

/** How often the states are fetched again, so a lock taken or released by a run shows. */
export const STATES_REFRESH_MS = 5_000;

const base = (projectId: number) => `/project/${projectId}/terraform/states`;
export const stateKeys = {
  all: (projectId: number) => ['project', projectId, 'terraform_states'] as const,
  detail: (projectId: number, name: string) => ['project', projectId, 'terraform_states', name] as const,
  diff: (projectId: number, name: string, from: number, to: number) =>
    ['project', projectId, 'terraform_states', name, 'diff', from, to] as const,
};

export const useStates = (projectId: number) =>
  useQuery({
    queryKey: stateKeys.all(projectId),
    queryFn: () => api<StateSummary[]>(base(projectId)),
    refetchInterval: STATES_REFRESH_MS,
  });

export const useStateDetail = (projectId: number, name: string | null) =>
  useQuery({
    queryKey: stateKeys.detail(projectId, name ?? ''),
    queryFn: () => api<StateDetail>(`${base(projectId)}/${encodeURIComponent(name ?? '')}/versions`),
    enabled: name !== null,
    refetchInterval: STATES_REFRESH_MS,
  });

export const useStateDiff = (projectId: number, name: string, pair: { from: number; to: number } | null) =>
  useQuery({
    queryKey: stateKeys.diff(projectId, name, pair?.from ?? 0, pair?.to ?? 0),
    queryFn: () =>
      api<StateDiff>(`${base(projectId)}/${encodeURIComponent(name)}/diff?from=${pair?.from}&to=${pair?.to}`),
    enabled: pair !== null,
  });

function useStateMutation<V>(projectId: number, call: (v: V) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: () => void client.invalidateQueries({ queryKey: stateKeys.all(projectId) }),
  });
}

export const useRollback = (projectId: number) =>
  useStateMutation(projectId, ({ name, versionId }: { name: string; versionId: number }) =>
    api(`${base(projectId)}/${encodeURIComponent(name)}/versions/${versionId}/rollback`, { method: 'POST' }),
  );

export const useForceUnlock = (projectId: number) =>
  useStateMutation(projectId, (name: string) =>
    api(`${base(projectId)}/${encodeURIComponent(name)}/lock`, { method: 'DELETE' }),
  );

/** A byte count as people read it: 512 B, 14.2 KB, 3.1 MB. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1_048_576) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}
