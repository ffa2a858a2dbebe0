import type { Db } from '../../db';
import { jsonArrayParts, Kept } from '../../lib/kept';
import { TurnShared } from '../../lib/turn-shared';
import {
  findTasksByIds,
  listedTasksByIds,
  parseTaskHeads,
  readTaskHeads,
  readTaskListStamp,
  type TaskHead,
  type TaskListRow,
  type TaskPage,
} from '../../tasks/store';
import { type TaskViewRow, taskFieldsWith } from '../../tasks/task-view';
import { toTaskView } from './tasks.service';

/** What the engine says of a waiting task now (why it waits), which no row holds. */
export type StatusDetail = (taskId: number) => string | null;

/** A task as a list shows it: its fields, its template's name/type/app, starter, runner and build task. */
function listedTask(row: TaskListRow, build: TaskViewRow | undefined, statusDetail: StatusDetail) {
  const detail = (t: TaskViewRow) => (t.status === 'waiting' ? statusDetail(t.id) : null);
  // One object per task, its fields in one literal: copying a view into another, or adding to it afterwards, cost
  // more than the query on long lists.
  return taskFieldsWith(row, {
    status_detail: detail(row),
    tpl_alias: row.tpl_alias ?? '',
    tpl_type: row.tpl_type ?? '',
    tpl_app: row.tpl_app ?? '',
    user_name: row.user_name,
    build_task: build ? toTaskView(build, detail(build)) : null,
    runner: row.remote_runner_id ? { id: row.remote_runner_id, name: row.runner_name ?? null } : null,
  });
}

/** Tasks as lists show them, their build tasks read in one query. */
export async function listedTasks(db: Db, rows: TaskListRow[], statusDetail: StatusDetail) {
  const buildIds = [...new Set(rows.map((r) => r.build_task_id).filter((id) => id != null))];
  const builds = new Map((await findTasksByIds(db, buildIds)).map((b) => [b.id, b]));
  return rows.map((r) =>
    listedTask(r, r.build_task_id ? builds.get(r.build_task_id) : undefined, statusDetail),
  );
}

/** A task's entry of a list as the bytes an answer sends, kept while what it was made of holds (see `sameMaking`). */
type KeptTask = { head: TaskHead; body: Buffer; bytes: number };

/** The most the kept entries of task lists may take (about 0.8 KB a task). */
const MAX_KEPT_TASKS_BYTES = 32 * 1024 * 1024;

/** The most the last joined answers of task pages may take (about 160 KB a page of 200). */
const MAX_KEPT_PAGES_BYTES = 16 * 1024 * 1024;

/**
 * A page's last answer, with the text of the heads it was made for (see `readTaskHeads`) and the project's stamp
 * read with them (see `readTaskListStamp`), moved on when a later read found the same heads under a newer stamp.
 */
type KeptPage = { heads: string; stamp: string; body: Buffer; nextBefore: number | null; bytes: number };

/**
 * What is kept, per database (ids are a database's own): each task's entry, and the last answer of each page; and
 * the reads of one turn that its callers share (a project's stamp, a page's answer: see `TurnShared`).
 */
type KeptLists = {
  entries: Kept<number, KeptTask>;
  pages: Kept<string, KeptPage>;
  stamps: TurnShared<number, string>;
  answers: TurnShared<string, KeptPage>;
};
const keptByDb = new WeakMap<Db, KeptLists>();

function keptFor(db: Db): KeptLists {
  let kept = keptByDb.get(db);
  if (!kept) {
    kept = {
      entries: new Kept(MAX_KEPT_TASKS_BYTES),
      pages: new Kept(MAX_KEPT_PAGES_BYTES),
      stamps: new TurnShared(),
      answers: new TurnShared(),
    };
    keptByDb.set(db, kept);
  }
  return kept;
}

/** Which page of which project's tasks an answer is. */
const pageKey = (projectId: number, p: TaskPage) =>
  `${projectId}:${p.templateId ?? ''}:${p.status ?? ''}:${p.limit}:${p.offset ?? ''}:${p.before ?? ''}`;

/** An entry that shows what the engine says of a waiting task now (its own or its build's): made anew each time. */
const showsWaiting = (h: TaskHead) => h[2] === 'waiting' || h[7] === 'waiting';

/** Whether a page's heads may show a waiting task (a name that happens to be "waiting" only costs a rebuild). */
const mayShowWaiting = (heads: string) => heads.includes('"waiting"');

/**
 * Whether a kept entry still shows the task as the narrow read sees it now: the same revision of its row and of its
 * project's templates, and the same name or revision of the starter, runner and build task it shows.
 */
const sameMaking = (kept: TaskHead, now: TaskHead) =>
  kept[1] === now[1] && kept[3] === now[3] && kept[4] === now[4] && kept[5] === now[5] && kept[6] === now[6];

/**
 * A page of the project's tasks (newest first) as the JSON bytes its answer sends, and the last id of a full page
 * (the cursor of the next page; null when the page is not full). The readers of a page in one turn of the event
 * loop share one answer, made after each of them asked (`TurnShared`). A page whose last answer shows no waiting
 * task (whose entry says what the engine says now) reads the project's stamp first, shared by the readers of all
 * its pages in the turn: the same stamp is that answer again (the very same bytes, nothing a page of the project
 * shows having changed since). Otherwise the page's narrow read (`readTaskHeads`): the same heads as the last
 * answer are that answer again; else each task's entry is assembled from what was kept while its row's revision
 * (counted by the database on every change) and what else it shows hold: a list after a change reads the full rows
 * of what changed only, rather than every row again.
 */
export function tasksListBody(
  db: Db,
  projectId: number,
  page: TaskPage,
  statusDetail: StatusDetail,
): Promise<{ body: Buffer; nextBefore: number | null }> {
  const key = pageKey(projectId, page);
  return keptFor(db).answers.get(key, () => pageAnswer(db, projectId, page, key, statusDetail));
}

async function pageAnswer(
  db: Db,
  projectId: number,
  page: TaskPage,
  key: string,
  statusDetail: StatusDetail,
): Promise<KeptPage> {
  const { entries: kept, pages, stamps } = keptFor(db);
  const answered = pages.get(key);
  if (answered && !mayShowWaiting(answered.heads)) {
    const stamp = await stamps.get(projectId, () => readTaskListStamp(db, projectId));
    if (stamp === answered.stamp) return answered;
  }
  const { text, stamp } = await readTaskHeads(db, projectId, page);
  const last = pages.get(key);
  if (last && last.heads === text && !mayShowWaiting(text)) {
    // Changes elsewhere in the project: this page's answer holds under the newer stamp too.
    last.stamp = stamp;
    return last;
  }
  const heads = parseTaskHeads(text);
  const bodies = new Map<number, Buffer>();
  const headOf = new Map<number, TaskHead>();
  const stale: number[] = [];
  for (const h of heads) {
    const id = h[0];
    const entry = kept.get(id);
    if (entry && !showsWaiting(h) && sameMaking(entry.head, h)) bodies.set(id, entry.body);
    else {
      stale.push(id);
      headOf.set(id, h);
    }
  }
  for (let i = 0; i < stale.length; i += 500) {
    const rows = await listedTasksByIds(db, projectId, stale.slice(i, i + 500));
    const views = await listedTasks(db, rows, statusDetail);
    for (const view of views) {
      const body = Buffer.from(JSON.stringify(view));
      bodies.set(view.id, body);
      // Kept under what the narrow read saw: a row changed since then is read again by the next list.
      const head = headOf.get(view.id);
      if (head && !showsWaiting(head)) kept.set(view.id, { head, body, bytes: body.length });
    }
  }
  // A task deleted between the two reads is not listed, as a list read a moment later would not list it.
  const listed = heads.map((h) => bodies.get(h[0])).filter((body) => body !== undefined);
  const oldest = heads[heads.length - 1];
  const body = Buffer.concat(jsonArrayParts(listed));
  const answer = {
    heads: text,
    stamp,
    body,
    nextBefore: oldest && heads.length === page.limit ? oldest[0] : null,
    bytes: body.length + text.length,
  };
  pages.set(key, answer);
  return answer;
}
