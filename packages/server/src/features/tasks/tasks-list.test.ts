import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { insertRunner } from '../../../test/support/runner-rows';
import { insertTemplate, taskRow } from '../../../test/support/task-fixtures';
import { createTemplatesProject, type TemplatesProject } from '../../../test/support/template-fixtures';
import { insertReturningId } from '../../db/values';
import { findListedTask, type TaskPage } from '../../tasks/store';
import { listedTasks, type StatusDetail, tasksListBody } from './tasks-list';

describe.each(testDialects())('task lists kept between reads on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let templateIds: number[];
  let starterId: number;
  let runnerId: number;
  let buildId: number;
  let details: Map<number, string>;
  const detail: StatusDetail = (id) => details.get(id) ?? null;

  const insertTask = (templateId: number, values: Parameters<typeof taskRow>[2] = {}) =>
    insertReturningId(h.deps.db, h.deps.dialect, 'task', taskRow(project.projectId, templateId, values));

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    starterId = project.clients.manager.userId;
    const { db } = h.deps;
    templateIds = [
      await insertTemplate(h.deps, project.projectId, { name: 'Deploy', app: 'ansible', type: 'deploy' }),
      await insertTemplate(h.deps, project.projectId, { name: 'Build', app: 'bash', type: 'build' }),
    ];
    const [first] = templateIds as [number];
    runnerId = await insertRunner(db, { project_id: project.projectId, name: 'edge-1' });
    buildId = await insertTask(first, { status: 'success', version: '1.0.4', user_id: starterId });
    await insertTask(first, {
      status: 'error',
      message: 'failed',
      user_id: starterId,
      build_task_id: buildId,
    });
    await insertTask(first, { status: 'running', remote_runner_id: runnerId, runner: 'alpha' });
    await insertTask(first, { status: 'waiting', user_id: starterId });
    await insertTask(templateIds[1]!, {
      status: 'success',
      params: JSON.stringify({ limit: 'web1', tags: 'ä,"q"' }),
    });
    await insertTask(first, { status: 'stopped', build_task_id: buildId, remote_runner_id: runnerId });
    details = new Map();
  });
  afterAll(async () => h?.close());

  /** The page as each task is answered alone (GET tasks/{id}), its ids read straight from the table. */
  const builtAnew = async (page: TaskPage) => {
    const { db } = h.deps;
    let q = db.selectFrom('task').select('id').where('project_id', '=', project.projectId);
    if (page.templateId) q = q.where('template_id', '=', page.templateId);
    if (page.before !== undefined) q = q.where('id', '<', page.before);
    const ids = await q
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset ?? 0)
      .execute();
    const rows = await Promise.all(ids.map((r) => findListedTask(db, project.projectId, r.id)));
    return JSON.parse(
      JSON.stringify(
        await listedTasks(
          db,
          rows.filter((r) => r !== undefined),
          detail,
        ),
      ),
    );
  };

  /** The page from kept entries, read twice (the second from what the first kept), against the tasks read anew. */
  const expectSamePage = async (page: TaskPage = { limit: 100 }) => {
    const built = await builtAnew(page);
    for (let i = 0; i < 2; i++) {
      const { body } = await tasksListBody(h.deps.db, project.projectId, page, detail);
      expect(JSON.parse(body.toString())).toEqual(built);
    }
    return built as { id: number; status: string; status_detail: string | null; build_task: unknown }[];
  };

  it('answers each task as it is answered alone, page by page, and names the next page of a full one', async () => {
    const all = await expectSamePage();
    expect(all.length).toBe(6);
    await expectSamePage({ limit: 2, offset: 3 });
    await expectSamePage({ limit: 3, templateId: templateIds[0] });
    const first = await tasksListBody(h.deps.db, project.projectId, { limit: 4 }, detail);
    expect(first.nextBefore).toBe(all[3]?.id);
    // Nothing changed between two reads of a page (and none of it waits, whose entry says what the engine says
    // now): the second answer is the first one's bytes, not joined anew.
    const newest = async () => (await tasksListBody(h.deps.db, project.projectId, { limit: 2 }, detail)).body;
    const once = await newest();
    expect(JSON.parse(once.toString()).map((t: { status: string }) => t.status)).toEqual([
      'stopped',
      'success',
    ]);
    expect(await newest()).toBe(once);
    const rest = await tasksListBody(h.deps.db, project.projectId, { limit: 4, before: all[3]!.id }, detail);
    expect(JSON.parse(rest.body.toString()).map((t: { id: number }) => t.id)).toEqual(
      all.slice(4).map((t) => t.id),
    );
    expect(rest.nextBefore).toBeNull();

    // Through the routes: the answer its response schema describes (checked under test), the next page linked.
    const res = await project.admin.get(`${project.base}/tasks?limit=4`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(await builtAnew({ limit: 4 }));
    expect(res.headers.link).toBe(
      `</api/project/${project.projectId}/tasks?limit=4&before=${all[3]!.id}>; rel="next"`,
    );
    const last = await project.admin.get(`${project.base}/templates/${templateIds[0]}/tasks/last?limit=2`);
    expect(last.statusCode, last.body).toBe(200);
    expect(last.json()).toEqual(await builtAnew({ limit: 2, templateId: templateIds[0] }));
    expect(last.headers.link).toBeUndefined();
  });

  it('shows a change of a task, its template, starter, runner or build task at the next read', async () => {
    const { db } = h.deps;
    // No task of the page waits (a waiting task's entry is made anew each time): each read after the first is
    // settled by the project's stamp alone while nothing changes, so each change below must move it.
    await db
      .updateTable('task')
      .set({ status: 'error' })
      .where('project_id', '=', project.projectId)
      .where('status', '=', 'waiting')
      .execute();
    let list = await expectSamePage();
    const settled = (await tasksListBody(db, project.projectId, { limit: 100 }, detail)).body;
    expect((await tasksListBody(db, project.projectId, { limit: 100 }, detail)).body).toBe(settled);
    const running = list.find((t) => t.status === 'running')!.id;
    // A status the engine writes, with no server told.
    await db
      .updateTable('task')
      .set({ status: 'success', end: new Date().toISOString() })
      .where('id', '=', running)
      .execute();
    list = await expectSamePage();
    expect(list.find((t) => t.id === running)?.status).toBe('success');
    await db
      .updateTable('template')
      .set({ name: 'Renamed by SQL' })
      .where('id', '=', templateIds[0]!)
      .execute();
    list = await expectSamePage();
    expect(
      list
        .filter((t) => (t as unknown as { template_id: number }).template_id === templateIds[0])
        .map((t) => (t as unknown as { tpl_alias: string }).tpl_alias),
    ).toEqual([...Array(5)].map(() => 'Renamed by SQL'));
    await db.updateTable('user').set({ name: 'Starter Renamed' }).where('id', '=', starterId).execute();
    list = await expectSamePage();
    expect(list.some((t) => (t as unknown as { user_name: string }).user_name === 'Starter Renamed')).toBe(
      true,
    );
    await db.updateTable('remote_runner').set({ name: 'edge-2' }).where('id', '=', runnerId).execute();
    list = await expectSamePage();
    expect(list.some((t) => JSON.stringify(t).includes('"name":"edge-2"'))).toBe(true);
    await db.updateTable('task').set({ version: '1.0.5' }).where('id', '=', buildId).execute();
    list = await expectSamePage();
    expect(list.filter((t) => JSON.stringify(t.build_task).includes('1.0.5')).length).toBe(2);
    // A task deleted, and a new one: the next read follows.
    await db.deleteFrom('task').where('id', '=', running).execute();
    const newer = await insertTask(templateIds[0]!, { status: 'running' });
    list = await expectSamePage();
    expect(list.map((t) => t.id)).not.toContain(running);
    expect(list[0]?.id).toBe(newer);
  });

  it("answers the readers of a project's pages at once from one read of its stamp, and a reader after a change anew", async () => {
    const { db } = h.deps;
    const pages: TaskPage[] = [{ limit: 3 }, { limit: 2 }, { limit: 3, templateId: templateIds[0] }];
    const read = async (page: TaskPage = pages[0]!) =>
      (await tasksListBody(db, project.projectId, page, detail)).body;
    const answers: Buffer[] = [];
    for (const page of pages) answers.push(await read(page));
    const kept = answers[0]!;
    for (const answer of answers)
      expect(JSON.parse(answer.toString()).some((t: { status: string }) => t.status === 'waiting')).toBe(
        false,
      );
    const queries = vi.spyOn(db, 'executeQuery');
    try {
      const again = await Promise.all([...Array(10)].flatMap(() => pages.map((page) => read(page))));
      again.forEach((answer, i) => {
        expect(answer).toBe(answers[i % pages.length]);
      });
      expect(queries).toHaveBeenCalledTimes(1);
    } finally {
      queries.mockRestore();
    }
    const newest = JSON.parse(kept.toString())[0].id as number;
    await db.updateTable('task').set({ message: 'read anew' }).where('id', '=', newest).execute();
    const changed = await read();
    expect(JSON.parse(changed.toString())[0].message).toBe('read anew');
    expect(await read()).toBe(changed);
  });

  it("reads a waiting task's detail (and its build task's) from the engine for each answer", async () => {
    const { db } = h.deps;
    const waiting = await insertTask(templateIds[0]!, { status: 'waiting', build_task_id: buildId });
    await db.updateTable('task').set({ status: 'waiting' }).where('id', '=', buildId).execute();
    details = new Map([
      [waiting, 'Waiting for a free slot'],
      [buildId, 'Waiting for a runner'],
    ]);
    let list = await expectSamePage();
    expect(list.find((t) => t.id === waiting)?.status_detail).toBe('Waiting for a free slot');
    details = new Map([
      [waiting, 'Waiting for the project limit'],
      [buildId, 'Waiting for approval'],
    ]);
    list = await expectSamePage();
    expect(list.find((t) => t.id === waiting)?.status_detail).toBe('Waiting for the project limit');
    expect(list.filter((t) => JSON.stringify(t.build_task).includes('Waiting for approval')).length).toBe(3);
  });
});
