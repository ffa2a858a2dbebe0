import { type TaskOutputLine, type TaskStatus, taskOutputLineSchema } from '@signalbox/contracts';
import type { LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { rows } from '../../../test/support/scheduler-rows';
import { now } from '../../db/values';
import { insertOutput, type OutputRow } from '../../tasks/output/output.store';
import { RECENT_LOG_STATE_MS } from './finished-pages';
import { idBeforeLine, lineOfId } from './task-output';

type Line = TaskOutputLine;

/** The target of a `Link: <…>; rel="next"` header, or null when the response has none. */
function nextLink(res: LightMyRequestResponse): string | null {
  const header = res.headers.link;
  if (header === undefined) return null;
  const match = /<([^>]*)>\s*;\s*rel="next"/.exec(String(header));
  return match ? match[1]! : null;
}

describe.each(testDialects())('task output pages on $name', (dialect) => {
  let h: Harness;
  let guest: Client;
  let projectId: number;
  /** 25,000 short lines, interleaved in the table with another task's lines. */
  let bigTask: number;
  let otherTask: number;
  /** Five lines of 900,000 characters each. */
  let wideTask: number;
  let emptyTask: number;
  const BIG = 25_000;
  const bigLines = Array.from({ length: BIG }, (_, i) =>
    i === 3 ? `\u001b[32mgreen ${i + 1}\u001b[0m` : `line ${i + 1}`,
  );
  const wideLines = Array.from({ length: 5 }, (_, i) => `${i + 1}:${'x'.repeat(900_000)}`);
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const owner = await h.userClient({ can_create_project: true });
    let members: Awaited<ReturnType<Harness['projectWithTeam']>>['members'];
    ({ projectId, members } = await h.projectWithTeam(owner));
    guest = members.guest;
    const make = rows(h.deps.db, h.deps.dialect);
    const template = await make.template(projectId);
    const finished = { status: 'success', start: now(), end: now() };
    bigTask = await make.task(projectId, template, finished);
    otherTask = await make.task(projectId, template, finished);
    wideTask = await make.task(projectId, template, finished);
    emptyTask = await make.task(projectId, template, finished);
    const time = now();
    // Batches of 1,000 alternating between two tasks, so the big task's ids have gaps.
    for (let i = 0; i < BIG; i += 1000) {
      const batch: OutputRow[] = bigLines
        .slice(i, i + 1000)
        .map((output) => ({ task_id: bigTask, time, output }));
      await insertOutput(h.deps.db, h.deps.dialect, batch);
      await insertOutput(h.deps.db, h.deps.dialect, [{ task_id: otherTask, time, output: `other ${i}` }]);
    }
    for (const output of wideLines)
      await insertOutput(h.deps.db, h.deps.dialect, [{ task_id: wideTask, time, output }]);
  }, 120_000);
  afterAll(async () => h?.close());

  /** Follows the next links from `first` to the end; returns every line and each page's response. */
  async function follow(first: string) {
    const lines: Line[] = [];
    const pages: LightMyRequestResponse[] = [];
    let url: string | null = first;
    while (url) {
      const res = await guest.get(url);
      expect(res.statusCode, url).toBe(200);
      pages.push(res);
      // A page goes out as prebuilt JSON, past the response check: it is checked against its schema here.
      lines.push(...taskOutputLineSchema.array().parse(res.json()));
      url = nextLink(res);
      expect(pages.length, 'pages').toBeLessThan(1000);
    }
    return { lines, pages };
  }

  /** `lines` are `expected`, numbered on from `firstLine` (their positions in the log). */
  const expectComplete = (lines: Line[], expected: string[], taskId: number, firstLine = 1) => {
    expect(lines.map((l) => l.output)).toEqual(expected);
    expect(lines.findIndex((l, i) => l.line !== firstLine + i)).toBe(-1);
    expect(lines.every((l) => l.task_id === taskId)).toBe(true);
    const ids = lines.map((l) => l.id);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `id ${i}`).toBe(true);
  };

  it('answers a guest the first 10,000 lines by default, with a link to the next page', async () => {
    const res = await guest.get(p(`/tasks/${bigTask}/output`));
    expect(res.statusCode).toBe(200);
    const page = res.json() as Line[];
    expect(page).toHaveLength(10_000);
    expect(page[0]).toMatchObject({ task_id: bigTask, output: 'line 1' });
    expect(typeof page[0]!.id).toBe('number');
    expect(page[3]!.output).toBe('\u001b[32mgreen 4\u001b[0m');
    expect(page[9_999]!.output).toBe('line 10000');
    expect(nextLink(res)).toBe(
      `/api/project/${projectId}/tasks/${bigTask}/output?after=${page[9_999]!.id}&limit=10000`,
    );
  });

  it('pages through the whole log in order, without gaps or repeats, and ends without a link', async () => {
    const all = await follow(p(`/tasks/${bigTask}/output`));
    expect(all.pages).toHaveLength(3);
    expectComplete(all.lines, bigLines, bigTask);
    // A limit that divides the log: the last page is full and still has no link (no empty page after it).
    const even = await follow(p(`/tasks/${bigTask}/output?limit=5000`));
    expect(even.pages.map((r) => (r.json() as Line[]).length)).toEqual([5000, 5000, 5000, 5000, 5000]);
    expectComplete(even.lines, bigLines, bigTask);
    const odd = await follow(p(`/tasks/${bigTask}/output?limit=7000`));
    expect(odd.pages).toHaveLength(4);
    expectComplete(odd.lines, bigLines, bigTask);
  });

  it('starts a page at an offset or after a line id', async () => {
    const res = await guest.get(p(`/tasks/${bigTask}/output?offset=12345&limit=100`));
    const page = res.json() as Line[];
    expect(page.map((l) => l.output)).toEqual(bigLines.slice(12_345, 12_445));
    expect(nextLink(res)).toContain(`after=${page[99]!.id}&limit=100`);
    const rest = await follow(nextLink(res)!);
    expectComplete([...page, ...rest.lines], bigLines.slice(12_345), bigTask, 12_346);

    const after = await guest.get(p(`/tasks/${bigTask}/output?after=${page[0]!.id}&limit=3`));
    expect((after.json() as Line[]).map((l) => l.output)).toEqual(bigLines.slice(12_346, 12_349));
    expect((after.json() as Line[]).map((l) => l.line)).toEqual([12_347, 12_348, 12_349]);

    const tail = await guest.get(p(`/tasks/${bigTask}/output?offset=${BIG - 2}`));
    expect((tail.json() as Line[]).map((l) => l.output)).toEqual(bigLines.slice(-2));
    expect(nextLink(tail)).toBeNull();
    for (const url of [
      p(`/tasks/${bigTask}/output?offset=${BIG}`),
      p(`/tasks/${bigTask}/output?offset=999999999`),
      p(`/tasks/${emptyTask}/output`),
    ]) {
      const res = await guest.get(url);
      expect(res.json(), url).toEqual([]);
      expect(nextLink(res), url).toBeNull();
    }
  });

  it('numbers the line of any id by its position, counting from the marks deep reads leave', async () => {
    const all = await follow(p(`/tasks/${bigTask}/output`));
    // Small skips stand for the 50,000 lines of a real read: ids before, on and after marks, in any order.
    for (const position of [1, 999, 1000, 1001, 24_999, 5_432, 25_000, 2_000]) {
      const id = all.lines[position - 1]!.id;
      expect(await lineOfId(h.deps.db, bigTask, id, 1000), `line ${position}`).toBe(position);
    }
    expect(await lineOfId(h.deps.db, bigTask, 0, 1000)).toBe(0);
    expect(await lineOfId(h.deps.db, emptyTask, 12345, 1000)).toBe(0);
  });

  it('never reads another task through the after cursor', async () => {
    const others = await follow(p(`/tasks/${otherTask}/output?after=0&limit=2`));
    expectComplete(
      others.lines,
      Array.from({ length: BIG / 1000 }, (_, i) => `other ${i * 1000}`),
      otherTask,
    );
  });

  it('ends a page early when its lines are long, and still returns every line', async () => {
    const first = await guest.get(p(`/tasks/${wideTask}/output`));
    expect(first.body.length).toBeLessThan(4_000_000);
    expect((first.json() as Line[]).length).toBeLessThan(wideLines.length);
    expect(nextLink(first)).not.toBeNull();
    const all = await follow(p(`/tasks/${wideTask}/output`));
    expectComplete(all.lines, wideLines, wideTask);
  });

  it('streams the whole raw output in order', async () => {
    const raw = await guest.get(p(`/tasks/${bigTask}/raw_output`));
    expect(raw.statusCode).toBe(200);
    expect(raw.headers['content-type']).toMatch(/^text\/plain/);
    expect(raw.body).toBe(`${bigLines.map((l, i) => (i === 3 ? 'green 4' : l)).join('\n')}\n`);
    const wide = await guest.get(p(`/tasks/${wideTask}/raw_output`));
    expect(wide.body).toBe(`${wideLines.join('\n')}\n`);
    const empty = await guest.get(p(`/tasks/${emptyTask}/raw_output`));
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toBe('');
  });

  it('starts deep pages from where earlier reads skipped to, and forgets that when the log is replaced', async () => {
    // The database with every query counted; skips of 1,000 lines stand for the 50,000 a real read takes.
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: ({ node }) => {
        queries++;
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const db = h.deps.db.withPlugin(counting);
    const ids = (
      await h.deps.db
        .selectFrom('task_output')
        .select('id')
        .where('task_id', '=', bigTask)
        .orderBy('id')
        .execute()
    ).map((row) => Number(row.id));
    const expected = (offset: number) => (offset === 0 ? 0 : ids[offset - 1]);
    const skip = 1000;

    queries = 0;
    expect(await idBeforeLine(db, bigTask, 24_500, skip)).toBe(expected(24_500));
    expect(queries).toBe(1 + 24 + 1); // the first line, 24 whole skips, 500 lines
    queries = 0;
    expect(await idBeforeLine(db, bigTask, 24_600, skip)).toBe(expected(24_600));
    expect(queries).toBe(2); // the first line, then 600 lines from the mark at 24,000

    // Any offset, read at once by several readers, lands where a straight skip does.
    const offsets = [1, 999, 1000, 1001, 12_345, 19_999, 20_000, 24_999, 25_000, 25_001, 40_000];
    const found = await Promise.all(offsets.map((offset) => idBeforeLine(db, bigTask, offset, skip)));
    expect(found).toEqual(offsets.map(expected));

    // A log replaced under the same task id (its first line is another one) is skipped through again.
    const make = rows(h.deps.db, h.deps.dialect);
    const replaced = await make.task(projectId, await make.template(projectId), { status: 'success' });
    const write = (prefix: string) =>
      insertOutput(
        h.deps.db,
        h.deps.dialect,
        Array.from({ length: 3000 }, (_, i) => ({
          task_id: replaced,
          time: now(),
          output: `${prefix} ${i}`,
        })),
      );
    const lineAt = async (offset: number) => {
      const after = await idBeforeLine(db, replaced, offset, skip);
      const row = await h.deps.db
        .selectFrom('task_output')
        .select('output')
        .where('task_id', '=', replaced)
        .where('id', '>', after ?? 0)
        .orderBy('id')
        .executeTakeFirst();
      return row?.output;
    };
    await write('old');
    expect(await lineAt(2500)).toBe('old 2500');
    await h.deps.db.deleteFrom('task_output').where('task_id', '=', replaced).execute();
    await write('new');
    expect(await lineAt(2500)).toBe('new 2500');
  });

  it("keeps a finished task's pages and names them by ETag; a running task's pages are read every time", async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const template = await make.template(projectId);
    const ended = now();
    const task = await make.task(projectId, template, { status: 'success', start: ended, end: ended });
    const line = (output: string) =>
      insertOutput(h.deps.db, h.deps.dialect, [{ task_id: task, time: now(), output }]);
    // As the engine does: the status saved, then announced on the bus.
    const setTask = async (fields: { status: TaskStatus; end?: string | null }) => {
      await h.deps.db.updateTable('task').set(fields).where('id', '=', task).execute();
      h.deps.bus.publish({
        type: 'update',
        project_id: projectId,
        template_id: template,
        task_id: task,
        status: fields.status,
        start: ended,
        end: fields.end ?? null,
        version: null,
        message: '',
        user_id: null,
        created: ended,
        commit_hash: null,
        commit_message: null,
        status_detail: null,
      });
    };
    await line('first');
    const url = p(`/tasks/${task}/output?limit=5`);
    const first = await guest.get(url);
    expect(first.statusCode).toBe(200);
    expect(first.json().map((l: { output: string }) => l.output)).toEqual(['first']);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"log-\d+-success-\d+-o0-5"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');
    // The browser's copy is current: 304 without a body.
    const again = await guest.request('GET', url, undefined, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    // A finished log does not change: the kept page is answered without reading the lines again.
    await line('never stored by a finished task');
    expect((await guest.get(url)).body).toBe(first.body);
    // Another page (another limit or start) is its own.
    expect((await guest.get(p(`/tasks/${task}/output?limit=6`))).json()).toHaveLength(2);
    // A task that is not finished (or the same id ended again, as SQLite may reuse a deleted task's id) is read anew.
    await setTask({ status: 'running', end: null });
    const running = await guest.get(url);
    expect(running.headers.etag).toBeUndefined();
    expect(running.json()).toHaveLength(2);
    const later = new Date(Date.parse(ended) + 1000).toISOString();
    await setTask({ status: 'error', end: later });
    const reEnded = await guest.get(url);
    expect(reEnded.headers.etag).not.toBe(etag);
    expect(reEnded.json()).toHaveLength(2);
    expect((await guest.request('GET', url, undefined, { 'if-none-match': etag })).statusCode).toBe(200);
    // A final status that moves on within the same millisecond (a rejected plan on its way to error) is another key.
    const last = new Date(Date.parse(ended) + 2000).toISOString();
    await setTask({ status: 'rejected', end: last });
    const rejected = (await guest.get(url)).headers.etag;
    await line('Plan rejected');
    await setTask({ status: 'error' });
    const errored = await guest.get(url);
    expect(errored.headers.etag).not.toBe(rejected);
    expect(errored.json()).toHaveLength(3);
  });

  it("remembers a finished task's state for a moment, and forgets it when the task is deleted", async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const template = await make.template(projectId);
    const ended = now();
    const finished = { status: 'success', start: ended, end: ended };
    const [behind, deleted] = [
      await make.task(projectId, template, finished),
      await make.task(projectId, template, finished),
    ];
    for (const task of [behind, deleted])
      await insertOutput(h.deps.db, h.deps.dialect, [
        { task_id: task, time: ended, output: `line of ${task}` },
      ]);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const url = (task: number) => p(`/tasks/${task}/output?limit=7`);
      expect((await guest.get(url(behind))).statusCode).toBe(200);
      // Deleted where no event announces it (another instance without Redis): its page is still answered from
      // memory for up to RECENT_LOG_STATE_MS, without reading the task again...
      await h.deps.db.deleteFrom('task_output').where('task_id', '=', behind).execute();
      await h.deps.db.deleteFrom('task').where('id', '=', behind).execute();
      expect((await guest.get(url(behind))).json()).toEqual([
        expect.objectContaining({ output: `line of ${behind}` }),
      ]);
      // ...and not after.
      vi.setSystemTime(Date.now() + RECENT_LOG_STATE_MS);
      expect((await guest.get(url(behind))).statusCode).toBe(404);

      // Deleted through the API: gone at once.
      expect((await guest.get(url(deleted))).statusCode).toBe(200);
      const owner = await h.userClient({ admin: true });
      expect((await owner.del(p(`/tasks/${deleted}`))).statusCode).toBe(204);
      expect((await guest.get(url(deleted))).statusCode).toBe(404);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses bad offset, after and limit values with 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'Limit must be 1 or greater'],
      ['limit=10001', 'Limit must be at most 10000'],
      ['limit=abc', 'Limit must be a number'],
      ['limit=2.5', 'Limit must be an integer'],
      ['offset=-1', 'Offset must be 0 or greater'],
      ['offset=abc', 'Offset must be a number'],
      ['offset=1000000001', 'Offset must be at most 1000000000'],
      ['after=-1', 'After must be 0 or greater'],
      ['after=x', 'After must be a number'],
      ['after=5&offset=10', 'Use either offset or after, not both'],
    ];
    for (const [query, message] of cases) {
      const res = await guest.get(p(`/tasks/${bigTask}/output?${query}`));
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error, query).toBe(message);
    }
  });
});
