import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Insertable } from 'kysely';
import type { TaskTable, TemplateTable } from '../../src/db/tables';
import { templateRowDefaults } from '../../src/db/template-row';
import { insertReturningId } from '../../src/db/values';
import type { Deps } from '../../src/deps';
import { sharedTempDir } from './task-shared';

/** Small helpers that insert resource rows straight into the tables (the resource APIs are built elsewhere). */

/** What inserting rows needs: the database and its dialect (a Harness's deps, or an open handle). */
type Rows = Pick<Deps, 'db' | 'dialect'>;

export function gitRepo(
  files: Record<string, string>,
  opts: { branch?: string; mode?: number } = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-repo-'));
  execFileSync('git', ['init', '-q', '-b', opts.branch ?? 'main', dir]);
  commitFiles(dir, files, 'initial commit');
  return dir;
}

export function commitFiles(dir: string, files: Record<string, string>, message: string): string {
  for (const [name, content] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    if (name.endsWith('.sh')) chmodSync(path, 0o755);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args])
      .toString()
      .trim();
  git('add', '-A');
  git('commit', '-q', '-m', message);
  return git('rev-parse', 'HEAD');
}

export async function insertKey(
  deps: Deps,
  projectId: number,
  key: {
    name?: string;
    type: string;
    secret?: Record<string, string> | string;
    owner?: string;
    environment_id?: number;
  },
) {
  const secret =
    key.secret === undefined
      ? null
      : deps.box.seal(typeof key.secret === 'string' ? key.secret : JSON.stringify(key.secret));
  return insertReturningId(deps.db, deps.dialect, 'access_key', {
    project_id: projectId,
    name: key.name ?? `key-${Math.random().toString(36).slice(2, 7)}`,
    type: key.type,
    secret,
    owner: key.owner ?? '',
    environment_id: key.environment_id ?? null,
  });
}

export const insertRepository = (
  deps: Rows,
  projectId: number,
  repo: { git_url: string; git_branch?: string; ssh_key_id?: number | null; name?: string },
) =>
  insertReturningId(deps.db, deps.dialect, 'repository', {
    project_id: projectId,
    name: repo.name ?? 'repo',
    git_url: repo.git_url,
    git_branch: repo.git_branch ?? 'main',
    ssh_key_id: repo.ssh_key_id ?? null,
  });

export const insertInventory = (
  deps: Rows,
  projectId: number,
  inv: {
    type: string;
    inventory: string;
    name?: string;
    ssh_key_id?: number | null;
    become_key_id?: number | null;
    repository_id?: number | null;
  },
) =>
  insertReturningId(deps.db, deps.dialect, 'inventory', {
    project_id: projectId,
    name: inv.name ?? 'inventory',
    type: inv.type,
    inventory: inv.inventory,
    ssh_key_id: inv.ssh_key_id ?? null,
    become_key_id: inv.become_key_id ?? null,
    repository_id: inv.repository_id ?? null,
  });

/** A static inventory of the local machine for Ansible (local connection, the system Python). */
export const LOCAL_INVENTORY =
  'localhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n';

/** Inserts a static inventory of the local machine (see LOCAL_INVENTORY); returns its id. */
export const insertLocalInventory = (
  deps: Rows,
  projectId: number,
  keys: { ssh_key_id?: number | null; become_key_id?: number | null } = {},
) => insertInventory(deps, projectId, { type: 'static', inventory: LOCAL_INVENTORY, ...keys });

export const insertEnvironment = (
  deps: Rows,
  projectId: number,
  env: { json?: Record<string, unknown>; env?: Record<string, string>; name?: string },
) =>
  insertReturningId(deps.db, deps.dialect, 'environment', {
    project_id: projectId,
    name: env.name ?? 'env',
    json: JSON.stringify(env.json ?? {}),
    env: JSON.stringify(env.env ?? {}),
  });

/**
 * A complete template row: a Bash template running run.sh with nothing attached; `values` names what a test
 * cares about. The one template-row literal of the tests (backup fixtures and scheduler rows build on it).
 */
export function templateRow(projectId: number, values: Partial<Insertable<TemplateTable>> = {}) {
  return {
    ...templateRowDefaults,
    project_id: projectId,
    name: 'tpl',
    app: 'bash',
    playbook: 'run.sh',
    ...values,
  } satisfies Insertable<TemplateTable>;
}

/**
 * A task row with only the columns that have no default (a finished run of nothing, created now); `values` names
 * what a test cares about. The one task-row literal of the tests.
 */
export function taskRow(projectId: number, templateId: number, values: Partial<Insertable<TaskTable>> = {}) {
  return {
    project_id: projectId,
    template_id: templateId,
    status: 'success',
    message: '',
    created: new Date().toISOString(),
    playbook: '',
    environment: '{}',
    params: '{}',
    debug: 0,
    dry_run: 0,
    diff: 0,
    ...values,
  } satisfies Insertable<TaskTable>;
}

/** Inserts a template row straight into the database (the template API has its own tests); returns its id. */
export function insertTemplate(
  deps: Rows,
  projectId: number,
  tpl: Partial<Omit<Insertable<TemplateTable>, 'task_params'>> & {
    task_params?: Record<string, unknown>;
  } = {},
) {
  const { task_params, ...rest } = tpl;
  return insertReturningId(
    deps.db,
    deps.dialect,
    'template',
    templateRow(projectId, { ...rest, task_params: JSON.stringify(task_params ?? {}) }),
  );
}

/**
 * A read for waitFor that counts a failure as "not yet": for tests whose own reads share the app's database
 * connections while those are lost.
 */
export const orNothing =
  <T>(read: () => Promise<T>) =>
  async () => {
    try {
      return await read();
    } catch {
      return undefined;
    }
  };

export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function waitForStatus(
  deps: Pick<Deps, 'db'>,
  taskId: number,
  statuses: string[],
  timeoutMs = 20_000,
) {
  return waitFor(
    async () => {
      const t = await deps.db.selectFrom('task').selectAll().where('id', '=', taskId).executeTakeFirst();
      return t && statuses.includes(t.status) ? t : undefined;
    },
    timeoutMs,
    `task ${taskId} to reach ${statuses.join('/')}`,
  );
}

export async function outputOf(deps: Deps, taskId: number): Promise<string[]> {
  const rows = await deps.db
    .selectFrom('task_output')
    .select('output')
    .where('task_id', '=', taskId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.output);
}

/** True while the process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

/** Puts an executable stand-in on a private PATH directory. */
/**
 * A temporary folder of stand-in tools, put first on PATH, and its empty `argv.log` for them to record their calls
 * in: `tools` gives each tool's script for that record. `restore` puts PATH back.
 */
export function toolsOnPath(tools: Record<string, (record: string) => string>) {
  // Shared with the tasks: confined, they see it (and may write the record) as the tools directory of an admin.
  const bin = sharedTempDir('sb-bin-');
  const record = join(bin, 'argv.log');
  writeFileSync(record, '');
  for (const [name, script] of Object.entries(tools)) standIn(bin, name, script(record));
  const originalPath = process.env.PATH;
  process.env.PATH = `${bin}:${originalPath}`;
  return {
    bin,
    record,
    restore: () => {
      process.env.PATH = originalPath;
    },
  };
}

export function standIn(dir: string, name: string, script: string) {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}
