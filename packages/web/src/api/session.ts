import type { LoginOptions, Project, ProjectRoleInfo, User } from '@signalbox/contracts';
import { useQuery } from '@tanstack/react-query';
import { api, baseUrl } from './client';

export type Info = {
  version: string;
  web_host?: string;
  schedule_timezone?: string;
  /** SIGNALBOX_TASK_RETENTION_DAYS: what a project's 0 means (0 = keep forever). */
  task_retention_days?: number;
  /** What this server's tasks can see (administrators only). */
  task_sandbox?: { mode: 'bwrap' | 'off' | 'refused'; reason?: string };
  /** The alert channels the server is configured for (names only). */
  alert_channels?: string[];
};

export const sessionKeys = {
  user: ['user'] as const,
  info: ['info'] as const,
  projects: ['projects'] as const,
  project: (id: number) => ['project', id] as const,
  role: (id: number) => ['project', id, 'role'] as const,
};

export const useUser = () =>
  useQuery({ queryKey: sessionKeys.user, queryFn: () => api<User>('/user'), retry: false });
/** The signed-in user, for pages that SessionRoot renders only once the user has loaded. */
export function useSignedInUser(): User {
  const { data } = useUser();
  if (!data) throw new Error('No signed-in user: this page is rendered only inside SessionRoot');
  return data;
}
export const useInfo = () => useQuery({ queryKey: sessionKeys.info, queryFn: () => api<Info>('/info') });
export const useProjects = () =>
  useQuery({ queryKey: sessionKeys.projects, queryFn: () => api<Project[]>('/projects') });
export const useProject = (id: number) =>
  useQuery({
    queryKey: sessionKeys.project(id),
    queryFn: () => api<Project>(`/project/${id}`),
    retry: false,
    // No project (0, outside a project's pages): nothing to ask.
    enabled: id > 0,
  });
export const useProjectRole = (id: number) =>
  useQuery({
    queryKey: sessionKeys.role(id),
    queryFn: () => api<ProjectRoleInfo>(`/project/${id}/role`),
    retry: false,
    enabled: id > 0,
  });
export const useLoginOptions = () =>
  useQuery({ queryKey: ['auth', 'login'], queryFn: () => api<LoginOptions>('/auth/login') });

export async function signOut() {
  try {
    await api('/auth/logout', { method: 'POST' });
  } finally {
    window.location.assign(`${baseUrl}/auth/login`);
  }
}
