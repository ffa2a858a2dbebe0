import { afterAll, beforeAll, expect } from 'vitest';
import type { Config } from '../../src/config';
import type { Deps } from '../../src/deps';
import { type LiveMessage, logMessages } from '../../src/live/bus';
import type { TestDialect } from './dialects';
import { type Client, createHarness, type Harness } from './harness';
import {
  gitRepo,
  insertEnvironment,
  insertKey,
  insertRepository,
  outputOf,
  waitForStatus,
} from './task-fixtures';

/**
 * The set-up and steps the task-run tests share: a harness with a project to run tasks in, a repository of a
 * fresh git repository, an environment with secret values, starting a task and waiting for its end.
 */

/** The statuses a task ends in. */
export const ENDED = ['success', 'error', 'stopped'];

/** A harness (see createHarness) with a project owned by a signed-in user who may create projects. */
export async function harnessWithProject(dialect: TestDialect, overrides: Partial<Config> = {}) {
  const h = await createHarness(dialect, overrides);
  return { h, ...(await ownedProject(h)) };
}

/** A signed-in user who may create projects, and a project of theirs with a member of every role. */
export async function ownedProject(h: Harness) {
  const owner = await h.userClient({ can_create_project: true });
  const { projectId, members } = await h.projectWithTeam(owner);
  return { owner, projectId, members };
}

/** Inserts a repository of a new git repository holding `files` (see gitRepo); its id and the repository's path. */
export async function insertGitRepository(
  deps: Pick<Deps, 'db' | 'dialect'>,
  projectId: number,
  files: Record<string, string>,
  opts: { name?: string; fileUrl?: boolean } = {},
) {
  const dir = gitRepo(files);
  const git_url = opts.fileUrl ? `file://${dir}` : dir;
  return { id: await insertRepository(deps, projectId, { git_url, name: opts.name }), dir };
}

/**
 * Inserts an environment (`values`: its JSON and plain environment variables) with secret values of its own:
 * `secrets.vars` as extra variables, `secrets.env` as environment variables. Returns the environment's id.
 */
export async function insertSecretEnvironment(
  deps: Deps,
  projectId: number,
  values: Parameters<typeof insertEnvironment>[2],
  secrets: { vars?: Record<string, string>; env?: Record<string, string> },
) {
  const envId = await insertEnvironment(deps, projectId, values);
  const kinds = [
    ['var', 'variable', secrets.vars],
    ['env', 'environment', secrets.env],
  ] as const;
  for (const [type, owner, named] of kinds)
    for (const [name, secret] of Object.entries(named ?? {}))
      await insertKey(deps, projectId, { name, type, owner, environment_id: envId, secret });
  return envId;
}

/**
 * Starts a task as `client` (expects 201) and waits until it reaches one of `statuses` (by default any end);
 * its row and its output lines.
 */
export async function runTask(
  h: Harness,
  client: Client,
  projectId: number,
  body: Record<string, unknown>,
  { statuses = ENDED, timeoutMs }: { statuses?: string[]; timeoutMs?: number } = {},
) {
  const res = await client.post(`/api/project/${projectId}/tasks`, body);
  expect(res.statusCode, res.body).toBe(201);
  const done = await waitForStatus(h.deps, res.json().id, statuses, timeoutMs);
  return { done, out: await outputOf(h.deps, done.id) };
}

/** Every live message the harness's bus publishes from now on (updates, and log lines one by one). */
export function liveMessagesOf(h: Harness): LiveMessage[] {
  const messages: LiveMessage[] = [];
  h.deps.bus.on('live', (m) => messages.push(m));
  h.deps.bus.on('logs', (b) => messages.push(...logMessages(b)));
  return messages;
}

/** The statuses the task's live updates carried, in order. */
export const updatesOf = (messages: LiveMessage[], taskId: number) =>
  messages
    .filter((m) => m.type === 'update' && m.task_id === taskId)
    .map((m) => (m as { status: string }).status);

export type ProjectHarness = Awaited<ReturnType<typeof harnessWithProject>>;

/**
 * For the tests of a describe block: a harnessWithProject made before them and closed after them. The returned
 * object's fields are set once the block's tests run.
 */
export function useHarnessWithProject(dialect: TestDialect, overrides: Partial<Config> = {}): ProjectHarness {
  const p = {} as ProjectHarness;
  beforeAll(async () => {
    Object.assign(p, await harnessWithProject(dialect, overrides));
  });
  afterAll(async () => p.h?.close());
  return p;
}
