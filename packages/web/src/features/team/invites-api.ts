import type { ProjectInvite, ProjectRole, UserInvite } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { sessionKeys } from '../../api/session';
import { teamKeys } from './api';

/** The answer of an invite made: the invite, its token, and what became of the e-mail of a new address. */
export type CreatedInvite = ProjectInvite & {
  token: string;
  mail_status?: 'sent' | 'failed' | 'not_configured';
};

export const inviteKeys = {
  project: (projectId: number) => [...teamKeys.members(projectId), 'invites'] as const,
  mine: ['user', 'invites'] as const,
};

/** The project's invites, newest first (every member reads them). */
export const useInvites = (projectId: number) =>
  useQuery({
    queryKey: inviteKeys.project(projectId),
    queryFn: () => api<ProjectInvite[]>(`/project/${projectId}/invites?sort=created&order=desc`),
  });

export function useInviteMutations(projectId: number) {
  const client = useQueryClient();
  const invalidate = () => void client.invalidateQueries({ queryKey: inviteKeys.project(projectId) });
  return {
    create: useMutation({
      mutationFn: (body: { email: string; role: ProjectRole }) =>
        api<CreatedInvite>(`/project/${projectId}/invites`, { method: 'POST', body }),
      onSuccess: invalidate,
    }),
    withdraw: useMutation({
      mutationFn: (inviteId: number) =>
        api(`/project/${projectId}/invites/${inviteId}`, { method: 'DELETE' }),
      onSuccess: invalidate,
    }),
  };
}

/** The signed-in user's invites waiting for an answer. */
export const useMyInvites = () =>
  useQuery({ queryKey: inviteKeys.mine, queryFn: () => api<UserInvite[]>('/user/invites') });

export function useAnswerInvite() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, accept }: { id: number; accept: boolean }) =>
      api(`/user/invites/${id}/${accept ? 'accept' : 'decline'}`, { method: 'POST' }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: inviteKeys.mine });
      void client.invalidateQueries({ queryKey: sessionKeys.projects });
    },
  });
}
