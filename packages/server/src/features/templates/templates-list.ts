import type { TemplateLastTask } from '@signalbox/contracts';
import type { Db } from '../../db';
import { driftStatuses } from '../../tasks/terraform-plans.store';
import { commitCheckSchedulesOf } from '../schedules';
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

/** The most the kept JSON of templates and tasks may take together (about 1.5 KB a template with its last task). */
export const MAX_KEPT_LIST_BYTES = 64 * 1024 * 1024;

/** Kept entries by key, the oldest kept dropped first past `maxBytes` (each counted by its JSON's length). */
class Kept<K, V extends { bytes: number }> {
  private readonly entries = new Map<K, V>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V) {
    this.delete(key);
    this.entries.set(key, value);
    this.total += value.bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
  }

  delete(key: K) {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.total -= old.bytes;
  }
}

type KeptLists = {
  templates: Kept<number, KeptTemplate & { bytes: number }>;
  tasks: Kept<number, KeptTask & { bytes: number }>;
};

/** What is kept, per database (ids are a database's own). */
const keptByDb = new WeakMap<Db, KeptLists>();

function keptFor(db: Db): KeptLists {
  let kept = keptByDb.get(db);
  if (!kept) {
    kept = { templates: new Kept(MAX_KEPT_LIST_BYTES / 2), tasks: new Kept(MAX_KEPT_LIST_BYTES / 2) };
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
};

/** Each template's revision and task counters, its last task's revision and starter: one narrow indexed read. */
function readHeads(db: Db, projectId: number, viewId?: number): Promise<Head[]> {
  let q = db
    .selectFrom('template')
    .leftJoin('task', (join) =>
      join.onRef('task.id', '=', 'template.last_task_id').on('task.project_id', '=', projectId),
    )
    .leftJoin('user', 'user.id', 'task.user_id')
    .select([
      'template.id',
      'template.rev',
      'template.task_count',
      'template.last_task_id',
      'task.rev as task_rev',
      'user.name as user_name',
    ])
    .where('template.project_id', '=', projectId);
  if (viewId !== undefined) q = q.where('template.view_id', '=', viewId);
  return q.execute();
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

/**
 * The templates list of a project (optionally of one view) as the JSON its answer sends: each template as
 * `findTemplate` makes it, in the order `sortTemplates` gives, assembled from what was kept of each template and its last task while their rows'
 * revisions (counted by the database on every change) hold. A list after a change reads one narrow row per template
 * and the full rows of what changed only, rather than every row and task again.
 */
export async function templatesListJson(
  db: Db,
  projectId: number,
  opts: TemplateSort & { viewId?: number } = {},
): Promise<string> {
  const [heads, schedules, drift] = await Promise.all([
    readHeads(db, projectId, opts.viewId),
    commitCheckSchedulesOf(db, projectId),
    driftStatuses(db, projectId),
  ]);
  const [templates, lastOf] = await Promise.all([
    templatesOf(db, projectId, heads),
    lastTasksOf(db, projectId, heads),
  ]);
  const byTemplate = new Map<number, ScheduleLike[]>();
  for (const s of schedules) byTemplate.set(s.template_id, [...(byTemplate.get(s.template_id) ?? []), s]);

  const items: { fields: TemplateOwnFields; json: string }[] = [];
  for (const h of heads) {
    const template = templates.get(h.id);
    // Deleted between the two reads: not listed, as a list read a moment later would not list it.
    if (!template) continue;
    const last = lastOf.get(h.id);
    const commitCheck = JSON.stringify(commitCheckOf(byTemplate.get(h.id) ?? [])).slice(1, -1);
    const json =
      `${template.head},${commitCheck},"last_task_id":${last ? last.id : 'null'},` +
      `"last_task":${last ? last.json : 'null'},"tasks":${Number(h.task_count)},"drift":${JSON.stringify(driftOf(drift.get(h.id)))}}`;
    items.push({ fields: template.fields, json });
  }
  const sorted = await sortTemplates(db, projectId, items, opts, (item) => item.fields);
  return `[${sorted.map((item) => item.json).join(',')}]`;
}
