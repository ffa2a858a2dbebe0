import type { Runner, RunnerRegistrationToken } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';

/**
 * Whose runners a page manages: the global ones (admins; `all` adds every project's runners) or one project's (its
 * owners).
 */
export type RunnerScope = { projectId: number | null; all?: boolean };

/** How often the list is fetched again, so a runner going on- or offline shows. */
export const RUNNERS_REFRESH_MS = 5_000;

const base = ({ projectId }: RunnerScope) =>
  projectId === null ? '/runners' : `/project/${projectId}/runners`;
/** A runner's own routes: the global ones for a global runner, its project's for a project runner. */
const runnerPath = (r: Pick<Runner, 'id' | 'project_id'>) => `${base({ projectId: r.project_id })}/${r.id}`;

export const runnerKeys = {
  list: ({ projectId, all }: RunnerScope) => ['runners', projectId ?? (all ? 'all' : 'global')] as const,
  tags: (projectId: number) => ['project', projectId, 'runner_tags'] as const,
};

export const useRunners = (scope: RunnerScope) =>
  useQuery({
    queryKey: runnerKeys.list(scope),
    queryFn: () => api<Runner[]>(scope.projectId === null && scope.all ? '/runners?all=1' : base(scope)),
    refetchInterval: RUNNERS_REFRESH_MS,
  });

/** Tags of the project's and the global runners, offered by the template and inventory forms. */
export const useRunnerTags = (projectId: number) =>
  useQuery({
    queryKey: runnerKeys.tags(projectId),
    queryFn: () => api<string[]>(`/project/${projectId}/runner_tags`),
  });

export type RunnerChange = Partial<Pick<Runner, 'name' | 'tags' | 'max_parallel_tasks' | 'active'>>;

export function useUpdateRunner() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ runner, change }: { runner: Runner; change: RunnerChange }) =>
      api<Runner>(runnerPath(runner), { method: 'PUT', body: change }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['runners'] }),
  });
}

export function useDeleteRunner() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (runner: Runner) => api(runnerPath(runner), { method: 'DELETE' }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['runners'] }),
  });
}

export const useCreateRegistrationToken = (scope: RunnerScope) =>
  useMutation({
    mutationFn: () => api<RunnerRegistrationToken>(`${base(scope)}/registration-tokens`, { method: 'POST' }),
  });

/** "2 minutes ago" in the current language (Intl.RelativeTimeFormat). */
export function timeAgo(iso: string, language: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.round((then - now) / 1000);
  const format = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  const abs = Math.abs(seconds);
  if (abs < 60) return format.format(seconds, 'second');
  if (abs < 3600) return format.format(Math.round(seconds / 60), 'minute');
  if (abs < 86_400) return format.format(Math.round(seconds / 3600), 'hour');
  return format.format(Math.round(seconds / 86_400), 'day');
}

/** The commands that register and start a runner with a one-time token. */
export function registerCommands(serverUrl: string, token: string, projectId: number | null): string {
  const project = projectId === null ? '' : ` --project ${projectId}`;
  return [
    `npx signalbox runner register --url ${serverUrl} --registration-token ${token}${project}`,
    'npx signalbox runner start',
  ].join('\n');
}
