import type { ApiToken, ApiTokenCreated, TokenScope, User } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { sessionKeys } from '../../api/session';

export const userKeys = { all: ['users'] as const };

export const useUsers = () => useQuery({ queryKey: userKeys.all, queryFn: () => api<User[]>('/users') });

export type UserValues = {
  name: string;
  username: string;
  email: string;
  password?: string;
  admin: boolean;
  alert: boolean;
  external: boolean;
  can_create_project: boolean;
};

export function useSaveUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ id, values }: { id?: number; values: UserValues }) => {
      if (id) {
        const { external: _external, password: _password, ...rest } = values;
        await api(`/users/${id}`, { method: 'PUT', body: rest });
        return;
      }
      await api<User>('/users', { method: 'POST', body: values });
    },
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: userKeys.all });
      void client.invalidateQueries({ queryKey: sessionKeys.user });
    },
  });
}

export function useDeleteUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api(`/users/${id}`, { method: 'DELETE' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: userKeys.all }),
  });
}

export type PasswordChange = {
  id: number;
  password: string;
  /** Required when users change their own password. */
  current_password?: string;
  /** Whether the user's API tokens stop working too. */
  revoke_tokens: boolean;
};

export function useChangePassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, ...body }: PasswordChange) => api(`/users/${id}/password`, { method: 'POST', body }),
    // The signed-in user's tokens may be gone.
    onSuccess: () => void client.invalidateQueries({ queryKey: tokenKeys.all }),
  });
}

export const tokenKeys = { all: ['user', 'tokens'] as const };

/** The signed-in user's API tokens (fetched while the tokens dialog is open). */
export const useApiTokens = (enabled: boolean) =>
  useQuery({ queryKey: tokenKeys.all, queryFn: () => api<ApiToken[]>('/user/tokens'), enabled });

export function useCreateApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: {
      name: string;
      expires_in_days: number | null;
      scopes: TokenScope[] | null;
      project_ids: number[] | null;
    }) => api<ApiTokenCreated>('/user/tokens', { method: 'POST', body }),
    onSuccess: () => void client.invalidateQueries({ queryKey: tokenKeys.all }),
  });
}

export function useDeleteApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => api(`/user/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: tokenKeys.all }),
  });
}
