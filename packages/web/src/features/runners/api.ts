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

/** A word as one shell argument: as it is when plainly safe, else single-quoted. */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(text) && !text.startsWith('-')) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** How the runner machine has Signalbox: a built checkout (`npx signalbox`) or the container image. */
export type RunnerInstall = 'checkout' | 'container';

/** What the register dialog puts in the commands besides the token. */
export type RegisterOptions = {
  projectId: number | null;
  name?: string;
  tags?: string[];
  install?: RunnerInstall;
};

/** The container image's `signalbox` command, with the runner folder in the `signalbox-runner` volume. */
const containerRun = (detached: boolean) =>
  [
    'docker run',
    detached ? '-d --name signalbox-runner --restart unless-stopped --stop-timeout 600' : '--rm',
    '-v signalbox-runner:/data -e SIGNALBOX_RUNNER_DIR=/data/runner',
  ].join(' ');

/**
 * The commands that register and start a runner with a one-time token. The token goes in the environment
 * (SIGNALBOX_RUNNER_REGISTRATION_TOKEN): it may start with `-`, and stays out of the process list.
 */
export function registerCommands(serverUrl: string, token: string, options: RegisterOptions): string {
  const args = [`--url ${shellWord(serverUrl)}`];
  const name = options.name?.trim();
  if (name) args.push(`--name ${shellWord(name)}`);
  for (const tag of options.tags ?? []) if (tag.trim()) args.push(`--tag ${shellWord(tag.trim())}`);
  if (options.projectId !== null) args.push(`--project ${options.projectId}`);
  const env = `SIGNALBOX_RUNNER_REGISTRATION_TOKEN=${shellWord(token)}`;
  if (options.install === 'container') {
    const command = 'signalbox node packages/server/bin/signalbox.mjs runner';
    return [
      `${containerRun(false)} -e ${env} ${command} register ${args.join(' ')}`,
      `${containerRun(true)} ${command} start`,
    ].join('\n');
  }
  return [`${env} npx signalbox runner register ${args.join(' ')}`, 'npx signalbox runner start'].join('\n');
}

/** How a runner's (or the server's) sandbox shows: the chip's text, colour and the tooltip's text (i18n keys). */
export function sandboxView(sandbox: { mode: string; reason?: string | null } | null | undefined): {
  label: string;
  color: 'success' | 'warning' | 'error' | 'default';
  help: string;
  reason: string;
} {
  const reason = sandbox?.reason ?? '';
  switch (sandbox?.mode) {
    case 'bwrap':
      return { label: 'runners.sandboxBwrap', color: 'success', help: 'runners.sandboxBwrapHelp', reason };
    case 'off':
      return {
        label: 'runners.sandboxOff',
        color: 'warning',
        help: reason ? 'runners.sandboxOffHelp' : 'runners.sandboxOffBySetting',
        reason,
      };
    case 'refused':
      return { label: 'runners.sandboxRefused', color: 'error', help: 'runners.sandboxRefusedHelp', reason };
    default:
      return {
        label: 'runners.sandboxUnknown',
        color: 'default',
        help: 'runners.sandboxUnknownHelp',
        reason,
      };
  }
}
