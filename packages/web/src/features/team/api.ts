import type { ProjectRole, TeamCandidate } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';

export type ProjectMember = {
  id: number;
  user_id?: number;
  name: string;
  username: string;
  role: ProjectRole;
};

export const teamKeys = { members: (projectId: number) => ['project', projectId, 'team'] as const };

export const memberUserId = (m: ProjectMember) => m.user_id ?? m.id;

export const useTeam = (projectId: number) =>
  useQuery({
    queryKey: teamKeys.members(projectId),
    queryFn: () => api<ProjectMember[]>(`/project/${projectId}/users?sort=name&order=asc`),
  });

/** Users not in the project yet (readable with manageProjectUsers, unlike the admin-only /users). */
export const useCandidates = (projectId: number, enabled: boolean) =>
  useQuery({
    queryKey: [...teamKeys.members(projectId), 'candidates'],
    queryFn: () => api<TeamCandidate[]>(`/project/${projectId}/users/candidates`),
    enabled,
  });

export function useTeamMutations(projectId: number) {
  const client = useQueryClient();
  const invalidate = () => void client.invalidateQueries({ queryKey: teamKeys.members(projectId) });
  return {
    add: useMutation({
      mutationFn: (body: { user_id: number; role: ProjectRole }) =>
        api(`/project/${projectId}/users`, { method: 'POST', body }),
      onSuccess: invalidate,
    }),
    setRole: useMutation({
      mutationFn: ({ userId, role }: { userId: number; role: ProjectRole }) =>
        api(`/project/${projectId}/users/${userId}`, { method: 'PUT', body: { role } }),
      onSuccess: invalidate,
    }),
    remove: useMutation({
      mutationFn: (userId: number) => api(`/project/${projectId}/users/${userId}`, { method: 'DELETE' }),
      onSuccess: invalidate,
    }),
    leave: useMutation({ mutationFn: () => api(`/project/${projectId}/me`, { method: 'DELETE' }) }),
  };
}
