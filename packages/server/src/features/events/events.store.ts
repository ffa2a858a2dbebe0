import type { EventView } from '@signalbox/contracts';
import { sql } from 'kysely';
import type { Db } from '../../db';

function baseQuery(db: Db) {
  return db
    .selectFrom('event')
    .leftJoin('user', 'user.id', 'event.user_id')
    .leftJoin('project', 'project.id', 'event.project_id')
    .select([
      'event.id',
      'event.project_id',
      'event.user_id',
      'event.object_id',
      'event.object_type',
      'event.description',
      'event.kind',
      'event.params',
      'event.created',
      'user.username as username',
      'user.name as user_name',
      'project.name as project_name',
    ])
    .orderBy('event.id', 'desc');
}

type EventQuery = ReturnType<typeof baseQuery>;

/**
 * Whose events: one project's, or those a user may see (admins: all, others: their projects'); `only`: of these
 * projects alone (an API token limited to them).
 */
export type EventScope =
  | { projectId: number }
  | { userId: number; admin: boolean; only?: readonly number[] | undefined };

/** What the caller narrows the log to (every field optional; see the contracts' event queries). */
export type EventFilter = {
  from?: string;
  to?: string;
  user_id?: number;
  user?: string;
  object_type?: string;
  q?: string;
  project_id?: number;
};

/** A page: `offset` rows skipped, or only ids below `before` (the keyset cursor). */
export type EventPage = { limit: number; offset?: number; before?: number };

/** `text` as a LIKE pattern matching it anywhere, with `!` escaping LIKE's own characters (every dialect). */
const containsPattern = (text: string) => `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;

/**
 * The column holds `text`, in any case: both sides go through the database's own lower(), so they fold alike
 * (SQLite's folds ASCII letters only: there `ü` finds `ü` but not `Ü`).
 */
const contains = (column: 'event.description' | 'user.username' | 'user.name', text: string) =>
  sql<boolean>`lower(${sql.ref(column)}) like lower(${containsPattern(text)}) escape '!'`;

function scoped(q: EventQuery, scope: EventScope): EventQuery {
  if ('projectId' in scope) return q.where('event.project_id', '=', scope.projectId);
  if (scope.only) {
    // No event of no project: `in` never matches a null project_id (and an empty list matches nothing).
    const only = scope.only.length ? [...scope.only] : [0];
    q = q.where('event.project_id', 'in', only);
  }
  if (scope.admin) return q;
  // Events of no project (users, sign-in) are for admins only: `in` never matches a null project_id.
  return q.where((eb) =>
    eb(
      'event.project_id',
      'in',
      eb
        .selectFrom('project_user')
        .select('project_user.project_id')
        .where('project_user.user_id', '=', scope.userId),
    ),
  );
}

function filtered(q: EventQuery, f: EventFilter): EventQuery {
  if (f.from) q = q.where('event.created', '>=', f.from);
  if (f.to) q = q.where('event.created', '<', f.to);
  if (f.user_id !== undefined) q = q.where('event.user_id', '=', f.user_id);
  if (f.object_type) q = q.where('event.object_type', '=', f.object_type);
  if (f.project_id !== undefined) q = q.where('event.project_id', '=', f.project_id);
  const user = f.user;
  if (user) q = q.where((eb) => eb.or([contains('user.username', user), contains('user.name', user)]));
  if (f.q) q = q.where(contains('event.description', f.q));
  return q;
}

/** One page of the matching events, newest first. */
export async function listEvents(
  db: Db,
  scope: EventScope,
  filter: EventFilter,
  page: EventPage,
): Promise<EventView[]> {
  let q = filtered(scoped(baseQuery(db), scope), filter);
  if (page.before !== undefined) q = q.where('event.id', '<', page.before);
  q = q.limit(page.limit);
  if (page.offset) q = q.offset(page.offset);
  const rows = await q.execute();
  return withTaskNames(
    db,
    rows.map((row) => ({ ...row, params: paramsOf(row.kind, row.params) })),
  );
}

/**
 * Task events name their task by number only: the template it ran, and the schedule or integration that started it
 * (a task no user started), are added to their params as `template`, `schedule` and `integration` while the task
 * is kept. The console words them in the reader's language.
 */
async function withTaskNames(db: Db, events: EventView[]): Promise<EventView[]> {
  const ids = [
    ...new Set(
      events
        .filter((e) => e.object_type === 'task' && e.kind?.startsWith('task.') && e.object_id !== null)
        .map((e) => e.object_id as number),
    ),
  ];
  if (ids.length === 0) return events;
  const tasks = await db
    .selectFrom('task')
    .leftJoin('template', 'template.id', 'task.template_id')
    .leftJoin('schedule', 'schedule.id', 'task.schedule_id')
    .leftJoin('integration', 'integration.id', 'task.integration_id')
    .select([
      'task.id',
      'template.name as template',
      'schedule.name as schedule_name',
      'schedule.cron_format as schedule_cron',
      'integration.name as integration',
    ])
    .where('task.id', 'in', ids)
    .execute();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return events.map((e) => {
    const task = e.object_type === 'task' && e.object_id !== null ? byId.get(e.object_id) : undefined;
    if (!task || !e.params) return e;
    const names: Record<string, string> = {};
    if (task.template) names.template = task.template;
    const schedule = task.schedule_name || task.schedule_cron;
    if (schedule) names.schedule = schedule;
    if (task.integration) names.integration = task.integration;
    return { ...e, params: { ...names, ...e.params } };
  });
}

/** An event's stored params as the object they were written as; null without a kind or when unreadable. */
function paramsOf(kind: string | null, text: string | null): EventView['params'] {
  if (!kind || !text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as EventView['params'])
      : null;
  } catch {
    return null;
  }
}

/** Rows per query of an export: small enough that a slow download holds little, large enough to be quick. */
const EXPORT_BATCH = 500;

/**
 * Every matching event, newest first, in keyset batches: each batch is read when the previous one has been
 * taken, so an export of any size holds one batch and a slow reader never holds a query open.
 */
export async function* eventBatches(
  db: Db,
  scope: EventScope,
  filter: EventFilter,
  batch = EXPORT_BATCH,
): AsyncGenerator<EventView[]> {
  let before: number | undefined;
  for (;;) {
    const rows = await listEvents(db, scope, filter, { limit: batch, before });
    if (rows.length > 0) yield rows;
    if (rows.length < batch) return;
    before = rows[rows.length - 1]?.id;
  }
}
