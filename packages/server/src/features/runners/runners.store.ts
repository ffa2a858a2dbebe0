import type { Runner } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { RemoteRunnerTable } from '../../db/tables';
import { fromBool, insertReturningId, parseJson, toBool, toCount } from '../../db/values';
import { runnerProtocol } from '../../runner-protocol/protocol';

/** Task statuses that hold one of a runner's slots. */
export const SLOT_STATUSES = ['starting', 'running', 'waiting_confirmation', 'confirmed'];

type RunnerRow = Selectable<RemoteRunnerTable>;

/** The runner's tags; a broken or non-list document reads as none. */
export function tagsOf(row: Pick<RunnerRow, 'tags'>): string[] {
  const tags = parseJson<unknown>(row.tags, []);
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
}

export const toRunner = (row: RunnerRow, running: number, projectName?: string | null): Runner => ({
  id: row.id,
  project_id: row.project_id,
  ...(projectName !== undefined ? { project_name: projectName } : {}),
  name: row.name,
  tags: tagsOf(row),
  version: row.version,
  max_parallel_tasks: row.max_parallel_tasks,
  active: toBool(row.active),
  online: row.instance_id != null,
  touched: row.touched,
  started_at: row.started_at,
  running_tasks: running,
  created: row.created,
  sandbox: sandboxOf(row),
  protocol: row.protocol,
  incompatible: row.protocol !== null && row.protocol !== runnerProtocol,
});

/** The sandbox a runner reported; an unknown stored mode reads as none. */
function sandboxOf(row: Pick<RunnerRow, 'sandbox' | 'sandbox_reason'>): Runner['sandbox'] {
  const mode = row.sandbox;
  if (mode !== 'bwrap' && mode !== 'off' && mode !== 'refused') return null;
  return { mode, reason: row.sandbox_reason || null };
}

/** How many slot-holding tasks each of the runners has. */
async function runningCounts(db: Db, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('task')
    .select((eb) => ['remote_runner_id', eb.fn.countAll().as('n')])
    .where('remote_runner_id', 'in', ids)
    .where('status', 'in', SLOT_STATUSES)
    .groupBy('remote_runner_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.remote_runner_id), toCount(r.n)]));
}

/**
 * Runners of one scope: `{ projectId: null }` the global ones, `{ projectId: n }` that project's, `{ all: true }`
 * every runner (with project names).
 */
export async function listRunners(
  db: Db,
  scope: { projectId: number | null } | { all: true },
): Promise<Runner[]> {
  let query = db
    .selectFrom('remote_runner')
    .leftJoin('project', 'project.id', 'remote_runner.project_id')
    .selectAll('remote_runner')
    .select('project.name as project_name');
  if (!('all' in scope)) {
    query =
      scope.projectId === null
        ? query.where('remote_runner.project_id', 'is', null)
        : query.where('remote_runner.project_id', '=', scope.projectId);
  }
  const rows = await query.orderBy('remote_runner.name').orderBy('remote_runner.id').execute();
  const counts = await runningCounts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map(({ project_name, ...row }) =>
    toRunner(row, counts.get(row.id) ?? 0, 'all' in scope ? (project_name ?? null) : undefined),
  );
}

/** One runner of the scope (project runners only within their project; global only with null). */
export async function findRunner(db: Db, projectId: number | null, id: number): Promise<Runner | undefined> {
  let query = db.selectFrom('remote_runner').selectAll().where('id', '=', id);
  query =
    projectId === null ? query.where('project_id', 'is', null) : query.where('project_id', '=', projectId);
  const row = await query.executeTakeFirst();
  if (!row) return undefined;
  return toRunner(row, (await runningCounts(db, [id])).get(id) ?? 0);
}

/** Whether another runner of the same scope already has this name. */
export async function nameTaken(db: Db, projectId: number | null, name: string, exceptId: number) {
  let query = db
    .selectFrom('remote_runner')
    .select('id')
    .where('name', '=', name)
    .where('id', '!=', exceptId);
  query =
    projectId === null ? query.where('project_id', 'is', null) : query.where('project_id', '=', projectId);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function updateRunner(
  db: Db,
  id: number,
  values: { name?: string; tags?: string[]; max_parallel_tasks?: number; active?: boolean },
) {
  const set: { name?: string; tags?: string; max_parallel_tasks?: number; active?: number } = {};
  if (values.name !== undefined) set.name = values.name;
  if (values.tags !== undefined) set.tags = JSON.stringify(values.tags);
  if (values.max_parallel_tasks !== undefined) set.max_parallel_tasks = values.max_parallel_tasks;
  if (values.active !== undefined) set.active = fromBool(values.active);
  if (Object.keys(set).length === 0) return;
  await db.updateTable('remote_runner').set(set).where('id', '=', id).execute();
}

export async function deleteRunner(db: Db, id: number) {
  await db.deleteFrom('remote_runner').where('id', '=', id).execute();
}

/** Stores a one-time registration token's hash. */
export function insertRegistrationToken(
  db: Db,
  dialect: Dialect,
  values: {
    project_id: number | null;
    token_hash: string;
    user_id: number;
    created: string;
    expires_at: string;
  },
) {
  return insertReturningId(db, dialect, 'runner_registration_token', { ...values, used_at: null });
}

/** Sorted distinct tags of a project's runners and the global runners. */
export async function projectRunnerTags(db: Db, projectId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('remote_runner')
    .select('tags')
    .where((eb) => eb.or([eb('project_id', 'is', null), eb('project_id', '=', projectId)]))
    .execute();
  const tags = new Set(rows.flatMap((r) => tagsOf(r)));
  return [...tags].sort((a, b) => a.localeCompare(b));
}
