import type { TemplateLastTask } from '@signalbox/contracts';
import type { Db } from '../../db';
import { compiledOnce } from '../../db/compiled-once';
import { jsonRowsQuery, jsonRowsText } from '../../db/json-rows';
import { jsonArrayParts, Kept, KeptJoins } from '../../lib/kept';
import { commitCheckSchedulesOf, DRIFT_SCHEDULE, projectCommitChecks } from '../schedules';
import { commitCheckOf, type ScheduleLike } from './commit-check';
import {
  driftOf,
  sortTemplates,
  type TemplateOwnFields,
  type TemplateSort,
  templateOwnFields,
} from './templates.service';
import { lastTasks } from './templates.store';

/** What a template's row made, kept while its revision holds: its fields and their JSON without the closing brace. */
type KeptTemplate = { rev: number; fields: TemplateOwnFields; head: string };
/** A task as a template's last task, kept while the task's and its template's revisions and its starter's name hold. */
type KeptTask = { rev: number; templateRev: number; userName: string | null; json: string };
/**
 * A template's whole entry of the list as the bytes the answer sends, kept while what it was made of holds: the
 * same kept template and last task, task count, commit check and drift. An answer is then these bytes joined, with
 * no string built or encoded again for what did not change.
 */
type KeptItem = {
  template: KeptTemplate;
  lastJson: string | null;
  tasks: number;
  commitCheck: string;
  drift: string;
  body: Buffer;
};

/**
 * The most the kept JSON of templates and tasks and the kept bytes of whole entries may take together (about
 * 1.5 KB a template with its last task, kept twice: as parts and as its entry); as much again for joined answers.
 */
const MAX_KEPT_LIST_BYTES = 64 * 1024 * 1024;

type KeptLists = {
  templates: Kept<number, KeptTemplate & { bytes: number }>;
  tasks: Kept<number, KeptTask & { bytes: number }>;
  items: Kept<number, KeptItem & { bytes: number }>;
};

/** What is kept, per database (ids are a database's own). */
const keptByDb = new WeakMap<Db, KeptLists>();

function keptFor(db: Db): KeptLists {
  let kept = keptByDb.get(db);
  if (!kept) {
    kept = {
      templates: new Kept(MAX_KEPT_LIST_BYTES / 4),
      tasks: new Kept(MAX_KEPT_LIST_BYTES / 4),
      items: new Kept(MAX_KEPT_LIST_BYTES / 2),
    };
    keptByDb.set(db, kept);
  }
  return kept;
}

/** One template of the list as the narrow read sees it. */
type Head = {
  id: number;
  rev: number;
  task_count: number | string;
  last_task_id: number | null;
  task_rev: number | null;
  user_name: string | null;
  /** Whether the template has a schedule that checks a repository for new commits (read then in full). */
  checked: boolean;
  /** Its last drift check's status (null: never checked). */
  drift: string | null;
};

/**
 * Each template's revision and task counters, its last task's revision and starter, whether it has commit-check
 * schedules and its drift status: one narrow indexed read, the list's only one while nothing it shows changed (the
 * schedules and the drift statuses were two more round trips on every list, each waking a database backend).
 */
async function readHeadsText(db: Db, projectId: number, viewId?: number): Promise<string> {
  const columns = [
    'id',
    'rev',
    'task_count',
    'last_task_id',
    'task_rev',
    'user_name',
    'checked',
    'drift',
  ] as const;
  const build = () => {
    const checks = projectCommitChecks(db, projectId)
      .select('schedule.template_id')
      .groupBy('schedule.template_id')
      .as('checks');
    let q = db
      .selectFrom('template')
      .leftJoin('task', (join) =>
        join.onRef('task.id', '=', 'template.last_task_id').on('task.project_id', '=', projectId),
      )
      .leftJoin('user', 'user.id', 'task.user_id')
      .leftJoin(checks, 'checks.template_id', 'template.id')
      .leftJoin('template_drift', 'template_drift.template_id', 'template.id')
      .select([
        'template.id',
        'template.rev',
        'template.task_count',
        'template.last_task_id',
        'task.rev as task_rev',
        'user.name as user_name',
        'checks.template_id as checked',
        'template_drift.status as drift',
      ])
      .where('template.project_id', '=', projectId);
    if (viewId !== undefined) q = q.where('template.view_id', '=', viewId);
    return jsonRowsQuery(db, q, columns);
  };
  // Read on every list request: its SQL is built once per shape (a view's list or the whole project's), its
  // values in the order the SQL names them (the last task's project, the schedules' project and type, the
  // templates' project, the view).
  const parameters: unknown[] = [projectId, projectId, DRIFT_SCHEDULE, projectId];
  if (viewId !== undefined) parameters.push(viewId);
  const key = viewId === undefined ? 'template heads' : 'template heads of a view';
  const result = await db.executeQuery(compiledOnce(db, key, parameters, build));
  return jsonRowsText(result.rows[0]);
}

/** The heads `readHeadsText` read. */
function parseHeads(text: string): Head[] {
  type Row = [
    number,
    number,
    number | string,
    number | null,
    number | null,
    string | null,
    unknown,
    string | null,
  ];
  return (JSON.parse(text) as Row[]).map(
    ([id, rev, task_count, last_task_id, task_rev, user_name, checked, drift]) => ({
      id,
      rev,
      task_count,
      last_task_id,
      task_rev,
      user_name,
      checked: checked !== null,
      drift,
    }),
  );
}

/**
 * Each listed template's kept JSON: what was kept at its revision, else its full row read now (and kept). Answered
 * for this request, so what another request keeps meanwhile (pushing older entries out) cannot take it away.
 */
async function templatesOf(db: Db, projectId: number, heads: Head[]) {
  const { templates } = keptFor(db);
  const out = new Map<number, KeptTemplate>();
  const stale: number[] = [];
  for (const h of heads) {
    const kept = templates.get(h.id);
    if (kept?.rev === Number(h.rev)) out.set(h.id, kept);
    else stale.push(h.id);
  }
  for (let i = 0; i < stale.length; i += 500) {
    const rows = await db
      .selectFrom('template')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', 'in', stale.slice(i, i + 500))
      .execute();
    for (const row of rows) {
      const fields = templateOwnFields(row);
      const head = JSON.stringify(fields).slice(0, -1);
      const entry = { rev: Number(row.rev), fields, head, bytes: head.length };
      templates.set(row.id, entry);
      out.set(row.id, entry);
    }
  }
  return out;
}

const taskFresh = (kept: KeptTask | undefined, head: Head, templateRev: number) =>
  kept !== undefined &&
  kept.rev === Number(head.task_rev) &&
  kept.templateRev === templateRev &&
  kept.userName === head.user_name;

/**
 * Each listed template's last task as JSON: what was kept while the task's and its template's revisions and its
 * starter's name hold, else read now (and kept). Answered for this request, as `templatesOf`.
 */
async function lastTasksOf(db: Db, projectId: number, heads: Head[]) {
  const { tasks } = keptFor(db);
  const out = new Map<number, { id: number; json: string }>();
  const stale: Head[] = [];
  for (const h of heads) {
    if (h.last_task_id === null || h.task_rev === null) continue;
    const kept = tasks.get(h.last_task_id);
    if (taskFresh(kept, h, Number(h.rev)))
      out.set(h.id, { id: h.last_task_id, json: (kept as KeptTask).json });
    else stale.push(h);
  }
  for (let i = 0; i < stale.length; i += 500) {
    const batch = stale.slice(i, i + 500);
    const found = await lastTasks(
      db,
      projectId,
      batch.map((h) => h.id),
    );
    for (const h of batch) {
      const task: TemplateLastTask | undefined = found.get(h.id);
      if (!task) continue;
      const json = JSON.stringify(task);
      out.set(h.id, { id: task.id, json });
      // Kept under the revision the narrow read saw: a task row changed since then is read again by the next list.
      // A newer task than that read named is answered, not kept.
      if (task.id === h.last_task_id)
        tasks.set(task.id, {
          rev: Number(h.task_rev),
          templateRev: Number(h.rev),
          userName: h.user_name,
          json,
          bytes: json.length,
        });
    }
  }
  return out;
}

/** JSON of values many templates share (no schedule, no drift), made once. */
const jsonOfShared = new Map<unknown, string>();
function sharedJson(key: unknown, make: () => string): string {
  let json = jsonOfShared.get(key);
  if (json === undefined) {
    json = make();
    if (jsonOfShared.size < 16) jsonOfShared.set(key, json);
  }
  return json;
}

/**
 * Whether an answer follows from its heads alone: they carry each template's revision, task count, last task's
 * revision and starter, drift and whether it has commit-check schedules. Not when a template has such schedules
 * (read in full: a schedule's change is not in the heads), nor when sorted by an inventory's, environment's or
 * repository's name (read from their rows).
 */
const answerOfHeads = (heads: Head[], opts: TemplateSort) =>
  (opts.sort === undefined || opts.sort === 'name' || opts.sort === 'playbook') &&
  !heads.some((h) => h.checked);

/**
 * The last answer made per project, view and order (see `KeptJoins`), per database, tagged with the heads text it
 * was made of when it follows from its heads alone.
 */
const joinedByDb = new WeakMap<Db, KeptJoins>();

function joinsFor(db: Db): KeptJoins {
  let joins = joinedByDb.get(db);
  if (!joins) {
    joins = new KeptJoins(MAX_KEPT_LIST_BYTES / 2);
    joinedByDb.set(db, joins);
  }
  return joins;
}

/**
 * The templates list of a project (optionally of one view) as the JSON bytes its answer sends: each template as
 * `findTemplate` makes it, in the order `sortTemplates` gives, assembled from what was kept of each template, its
 * last task and its whole entry while their rows' revisions (counted by the database on every change) hold. A list
 * after a change reads one narrow row per template and the full rows of what changed only, and makes the bytes of
 * the changed entries only, rather than every row, task and entry again.
 */
export async function templatesListJson(
  db: Db,
  projectId: number,
  opts: TemplateSort & { viewId?: number } = {},
): Promise<Buffer> {
  const text = await readHeadsText(db, projectId, opts.viewId);
  const key = `${projectId}:${opts.viewId ?? ''}:${opts.sort ?? ''}:${opts.order ?? ''}`;
  const joins = joinsFor(db);
  // The same heads as the last answer's, which followed from its heads alone: that answer again.
  const last = joins.madeOf(key, text);
  if (last) return last;
  const heads = parseHeads(text);
  const [templates, lastOf, schedules] = await Promise.all([
    templatesOf(db, projectId, heads),
    lastTasksOf(db, projectId, heads),
    // The schedules themselves only when a listed template has one (most lists: none).
    heads.some((h) => h.checked) ? commitCheckSchedulesOf(db, projectId) : [],
  ]);
  const byTemplate = new Map<number, ScheduleLike[]>();
  for (const s of schedules) byTemplate.set(s.template_id, [...(byTemplate.get(s.template_id) ?? []), s]);

  const { items: keptItems } = keptFor(db);
  const items: { fields: TemplateOwnFields; body: Buffer }[] = [];
  for (const h of heads) {
    const template = templates.get(h.id);
    // Deleted between the two reads: not listed, as a list read a moment later would not list it.
    if (!template) continue;
    const last = lastOf.get(h.id);
    const own = byTemplate.get(h.id);
    const commitCheck = own
      ? JSON.stringify(commitCheckOf(own)).slice(1, -1)
      : sharedJson('no schedule', () => JSON.stringify(commitCheckOf([])).slice(1, -1));
    const driftValue = driftOf(h.drift ?? undefined);
    const driftJson = sharedJson(driftValue, () => JSON.stringify(driftValue));
    const tasks = Number(h.task_count);
    const lastJson = last ? last.json : null;
    let item = keptItems.get(h.id);
    if (
      !item ||
      item.template !== template ||
      item.lastJson !== lastJson ||
      item.tasks !== tasks ||
      item.commitCheck !== commitCheck ||
      item.drift !== driftJson
    ) {
      const body = Buffer.from(
        `${template.head},${commitCheck},"last_task_id":${last ? last.id : 'null'},` +
          `"last_task":${lastJson ?? 'null'},"tasks":${tasks},"drift":${driftJson}}`,
      );
      item = { template, lastJson, tasks, commitCheck, drift: driftJson, body, bytes: body.length };
      keptItems.set(h.id, item);
    }
    items.push({ fields: template.fields, body: item.body });
  }
  const sorted = await sortTemplates(db, projectId, items, opts, (item) => item.fields);
  const parts = jsonArrayParts(sorted.map((item) => item.body));
  return joins.join(key, parts, answerOfHeads(heads, opts) ? text : null);
}
