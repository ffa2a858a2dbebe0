import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { WorkflowApprovalTable, WorkflowRunNodeTable, WorkflowRunTable } from '../../db/tables';
import { insertReturningId } from '../../db/values';

export type RunRow = Selectable<WorkflowRunTable>;
export type NodeRow = Selectable<WorkflowRunNodeTable>;
export type ApprovalRow = Selectable<WorkflowApprovalTable>;

/** The run states in which a run still moves on. */
export const activeRunStatuses = ['waiting', 'running', 'waiting_approval'] as const;

export function findRun(db: Db, projectId: number, runId: number) {
  return db
    .selectFrom('workflow_run')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', runId)
    .executeTakeFirst();
}

export function findRunById(db: Db, runId: number) {
  return db.selectFrom('workflow_run').selectAll().where('id', '=', runId).executeTakeFirst();
}

export function listRuns(
  db: Db,
  projectId: number,
  q: { workflow_id?: number; status?: string; limit: number; offset: number },
) {
  let query = db.selectFrom('workflow_run').selectAll().where('project_id', '=', projectId);
  if (q.workflow_id) query = query.where('workflow_id', '=', q.workflow_id);
  if (q.status) query = query.where('status', '=', q.status);
  return query.orderBy('id', 'desc').limit(q.limit).offset(q.offset).execute();
}

export async function activeRunIds(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('workflow_run')
    .select('id')
    .where('status', 'in', [...activeRunStatuses])
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

export function nodesOf(db: Db, runIds: number[]) {
  if (runIds.length === 0) return Promise.resolve([] as NodeRow[]);
  return db.selectFrom('workflow_run_node').selectAll().where('run_id', 'in', runIds).orderBy('id').execute();
}

export function approvalsOf(db: Db, runId: number) {
  return db.selectFrom('workflow_approval').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}

export function insertRun(db: Db, dialect: Dialect, row: Omit<RunRow, 'id'>) {
  return insertReturningId(db, dialect, 'workflow_run', row);
}

export async function insertNodes(
  db: Db,
  runId: number,
  projectId: number,
  nodes: { id: string; type: string }[],
) {
  if (nodes.length === 0) return;
  await db
    .insertInto('workflow_run_node')
    .values(
      nodes.map((n) => ({
        run_id: runId,
        project_id: projectId,
        node_id: n.id,
        type: n.type,
        status: 'pending',
        attempt: 0,
      })),
    )
    .execute();
}

/**
 * Moves a node on only if it is still as this instance read it (its status, and its attempt when given): the
 * claim that keeps two instances from acting on one node. True when this call moved it.
 */
export async function casNode(
  db: Db,
  runId: number,
  nodeId: string,
  from: { status: string | readonly string[]; attempt?: number; waitDue?: string },
  set: Partial<Omit<NodeRow, 'id' | 'run_id' | 'project_id' | 'node_id' | 'type'>>,
): Promise<boolean> {
  let q = db
    .updateTable('workflow_run_node')
    .set(set)
    .where('run_id', '=', runId)
    .where('node_id', '=', nodeId);
  q =
    typeof from.status === 'string'
      ? q.where('status', '=', from.status)
      : q.where('status', 'in', [...from.status]);
  if (from.attempt !== undefined) q = q.where('attempt', '=', from.attempt);
  if (from.waitDue !== undefined) q = q.where('wait_until', '<=', from.waitDue);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Moves a run on only if its status is still one of `from`. True when this call moved it. */
export async function casRun(
  db: Db,
  runId: number,
  from: readonly string[],
  set: Partial<Pick<RunRow, 'status' | 'start' | 'end'>>,
): Promise<boolean> {
  const result = await db
    .updateTable('workflow_run')
    .set(set)
    .where('id', '=', runId)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The tasks template nodes started, with what downstream nodes and digests read of them. */
export function tasksOf(db: Db, taskIds: number[]) {
  if (taskIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('task')
    .select([
      'id',
      'status',
      'message',
      'end',
      'version',
      'commit_hash',
      'outputs',
      'secret_outputs',
      'project_id',
    ])
    .where('id', 'in', taskIds)
    .execute();
}
export type RunTask = Awaited<ReturnType<typeof tasksOf>>[number];

export async function userNames(db: Db, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('user').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The caller's role in a project; null when not a member. */
export async function roleIn(db: Db, projectId: number, userId: number): Promise<string | null> {
  const row = await db
    .selectFrom('project_user')
    .select('role')
    .where('project_id', '=', projectId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role ?? null;
}
