import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import {
  ansibleBody,
  createTemplatesProject,
  insertTask,
  type TemplatesProject,
} from '../../../test/support/template-fixtures';
import type { Db } from '../../db';
import { insertReturningId } from '../../db/values';
import { findTemplate, sortTemplates, type TemplateSort } from './templates.service';
import { templatesListJson } from './templates-list';

describe.each(testDialects())('the templates list kept between reads on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let starterId: number;
  const ids: number[] = [];

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    starterId = project.clients.manager.userId;
    for (const [name, playbook] of [
      ['Deploy web', 'web.yml'],
      ['Backup db', 'backup.yml'],
      ['Áudit', 'audit.yml'],
    ]) {
      const res = await project.admin.post(
        `${project.base}/templates`,
        ansibleBody(project.fx, {
          name,
          playbook,
          survey_vars: [{ name: 'who', title: 'Who', type: 'string', required: true }],
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id);
    }
    await insertTask(h, project.projectId, ids[0]!, { status: 'success', user_id: starterId });
  });
  afterAll(async () => h?.close());

  /** The project's templates each read alone (as GET /templates/{id} answers them), in the order asked. */
  const builtAnew = async (sort: TemplateSort = {}) => {
    const db = h.deps.db;
    const rows = await db
      .selectFrom('template')
      .select('id')
      .where('project_id', '=', project.projectId)
      .execute();
    const each = await Promise.all(rows.map((r) => findTemplate(db, project.projectId, r.id)));
    const list = each.filter((t) => t !== undefined);
    return JSON.parse(JSON.stringify(await sortTemplates(db, project.projectId, list, sort, (t) => t)));
  };

  /** The list from kept JSON, read twice (the second from what the first kept), against the templates read anew. */
  const expectSameList = async (sort: TemplateSort = {}) => {
    const db = h.deps.db;
    const built = await builtAnew(sort);
    expect(JSON.parse((await templatesListJson(db, project.projectId, sort)).toString())).toEqual(built);
    expect(JSON.parse((await templatesListJson(db, project.projectId, sort)).toString())).toEqual(built);
    return built as { id: number; name: string; last_task: { id: number; status: string } | null }[];
  };
  /** The statements the list's second read runs (the first fills what is kept), through a counting connection. */
  const statementsOfList = async () => {
    let statements = 0;
    const counted: Db = h.deps.db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        statements++;
        return args.result;
      },
    });
    await templatesListJson(counted, project.projectId);
    statements = 0;
    await templatesListJson(counted, project.projectId);
    return statements;
  };
  const rev = async (table: 'template' | 'task', id: number) =>
    Number(
      (await h.deps.db.selectFrom(table).select('rev').where('id', '=', id).executeTakeFirstOrThrow()).rev,
    );

  it('answers the same body as the list built anew, sorted each way', async () => {
    const list = await expectSameList();
    expect(list.map((t) => t.name)).toEqual(['Áudit', 'Backup db', 'Deploy web']);
    expect(list.find((t) => t.id === ids[0])?.last_task?.status).toBe('success');
    for (const sort of ['name', 'playbook', 'inventory', 'environment', 'repository'] as const)
      for (const order of ['asc', 'desc'] as const) await expectSameList({ sort, order });
    // Through the route, the answer is what its response schema describes (responses are checked under test).
    const res = await project.admin.get(`${project.base}/templates?sort=playbook&order=desc`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual(await builtAnew({ sort: 'playbook', order: 'desc' }));
    // While nothing listed changed and no template checks for commits, a list is one statement: the templates'
    // heads with their drift statuses.
    expect(await statementsOfList()).toBe(1);
  });

  it('sorted by inventory, shows an inventory renamed at the next read (its name is in no head)', async () => {
    const zeta = await insertReturningId(h.deps.db, h.deps.dialect, 'inventory', {
      project_id: project.projectId,
      name: 'Zeta hosts',
      type: 'static',
      inventory: 'localhost',
      ssh_key_id: project.fx.key,
      become_key_id: null,
      repository_id: null,
    });
    await h.deps.db.updateTable('template').set({ inventory_id: zeta }).where('id', '=', ids[0]!).execute();
    try {
      let list = await expectSameList({ sort: 'inventory' });
      expect(list.at(-1)?.id).toBe(ids[0]);
      await h.deps.db.updateTable('inventory').set({ name: 'Alpha hosts' }).where('id', '=', zeta).execute();
      list = await expectSameList({ sort: 'inventory' });
      expect(list[0]?.id).toBe(ids[0]);
    } finally {
      await h.deps.db
        .updateTable('template')
        .set({ inventory_id: project.fx.inventory })
        .where('id', '=', ids[0]!)
        .execute();
    }
  });

  it('shows a change of the template, of its last task and of the task starter at the next read', async () => {
    await expectSameList();
    // A template changed through the API, and one changed by SQL that no server saw.
    const renamed = await project.admin.put(
      `${project.base}/templates/${ids[0]}`,
      ansibleBody(project.fx, { name: 'Deploy web tier', playbook: 'web.yml' }),
    );
    expect(renamed.statusCode, renamed.body).toBe(204);
    await h.deps.db
      .updateTable('template')
      .set({ description: 'changed by SQL' })
      .where('id', '=', ids[1]!)
      .execute();
    let list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])?.name).toBe('Deploy web tier');
    // The last task's row changes (as the engine writes a status); then its starter is renamed.
    const taskId = list.find((t) => t.id === ids[0])!.last_task!.id;
    await h.deps.db
      .updateTable('task')
      .set({ status: 'error', message: 'failed' })
      .where('id', '=', taskId)
      .execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])?.last_task?.status).toBe('error');
    const user = await h.deps.db
      .selectFrom('user')
      .selectAll()
      .where('id', '=', starterId)
      .executeTakeFirstOrThrow();
    await h.deps.db
      .updateTable('user')
      .set({ name: `${user.name} Renamed` })
      .where('id', '=', starterId)
      .execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])?.last_task).toMatchObject({ user_name: `${user.name} Renamed` });
    // A newer task, and then its deletion: the template's last task follows.
    const newer = await insertTask(h, project.projectId, ids[0]!, { status: 'running' });
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])?.last_task?.id).toBe(newer);
    await h.deps.db.deleteFrom('task').where('id', '=', newer).execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])?.last_task?.id).toBe(taskId);
    // Its commit check turned on (a schedule row, not the template's) and a drift check's verdict: each entry's
    // kept bytes follow what they were made of, not only the template's row.
    const watched = await project.admin.put(
      `${project.base}/templates/${ids[1]}`,
      ansibleBody(project.fx, {
        name: 'Backup db',
        playbook: 'backup.yml',
        check_new_commits: true,
        check_new_commits_repository_id: project.fx.repository,
      }),
    );
    expect(watched.statusCode, watched.body).toBe(204);
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[1])).toMatchObject({ check_new_commits: true });
    // The commit-check schedules are read only because a template has one.
    expect(await statementsOfList()).toBe(2);
    // The schedule's repository changed (a schedule row, in no head) shows at the next read.
    await h.deps.db
      .updateTable('schedule')
      .set({ repository_id: project.fx.otherRepository })
      .where('template_id', '=', ids[1]!)
      .execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[1])).toMatchObject({
      check_new_commits_repository_id: project.fx.otherRepository,
    });
    await h.deps.db
      .insertInto('template_drift')
      .values({
        template_id: ids[0]!,
        project_id: project.projectId,
        status: 'drifted',
        since: new Date().toISOString(),
        checked_at: new Date().toISOString(),
        task_id: taskId,
        report: '[]',
      })
      .execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])).toMatchObject({ drift: 'drifted' });
    await h.deps.db
      .updateTable('template_drift')
      .set({ status: 'in_sync' })
      .where('template_id', '=', ids[0]!)
      .execute();
    list = await expectSameList();
    expect(list.find((t) => t.id === ids[0])).toMatchObject({ drift: 'in_sync' });
    // A template deleted is gone from the next read.
    expect((await project.admin.del(`${project.base}/templates/${ids[2]}`)).statusCode).toBe(204);
    list = await expectSameList();
    expect(list.map((t) => t.id)).not.toContain(ids[2]);
  });

  it("counts a row's revision on every change of it, but not on its template's task counters", async () => {
    const before = await rev('template', ids[1]!);
    const task = await insertTask(h, project.projectId, ids[1]!, { status: 'waiting' });
    expect(await rev('template', ids[1]!)).toBe(before);
    const taskRev = await rev('task', task);
    await h.deps.db.updateTable('task').set({ status: 'running' }).where('id', '=', task).execute();
    expect(await rev('task', task)).toBe(taskRev + 1);
    await h.deps.db
      .updateTable('template')
      .set({ playbook: 'backup2.yml' })
      .where('id', '=', ids[1]!)
      .execute();
    expect(await rev('template', ids[1]!)).toBe(before + 1);
    await h.deps.db.deleteFrom('task').where('id', '=', task).execute();
    expect(await rev('template', ids[1]!)).toBe(before + 1);
  });
});

describe('the templates sort', () => {
  type T = { id: number; name: string; playbook: string };
  const fields = (t: T) => ({ ...t, inventory_id: null, environment_id: null, repository_id: null });
  // Sorts by name and playbook read no other table: no database is needed.
  const sorted = (list: T[], sort: TemplateSort = {}) =>
    sortTemplates(undefined as never, 4242, list, sort, fields).then((out) =>
      out.map((t) => `${t.id}:${t.name}`),
    );

  it('sorts a list again when its names or templates changed since the same list was sorted', async () => {
    const list = [
      { id: 1, name: 'beta', playbook: 'z.yml' },
      { id: 2, name: 'gamma', playbook: 'y.yml' },
      { id: 3, name: 'Alpha', playbook: 'x.yml' },
    ];
    expect(await sorted(list)).toEqual(['3:Alpha', '1:beta', '2:gamma']);
    // The same list in another order of rows: the same order.
    expect(await sorted([list[2]!, list[0]!, list[1]!])).toEqual(['3:Alpha', '1:beta', '2:gamma']);
    // One renamed: its new place, not the remembered one.
    expect(await sorted([list[0]!, { ...list[1]!, name: 'aardvark' }, list[2]!])).toEqual([
      '2:aardvark',
      '3:Alpha',
      '1:beta',
    ]);
    // As many other templates (other ids, one with a remembered id's name).
    expect(
      await sorted([
        { id: 7, name: 'beta', playbook: 'a.yml' },
        { id: 8, name: 'Beta', playbook: 'b.yml' },
        { id: 9, name: 'alpha', playbook: 'c.yml' },
      ]),
    ).toEqual(['9:alpha', '7:beta', '8:Beta']);
    // The other direction and another key are lists of their own.
    expect(await sorted(list, { order: 'desc' })).toEqual(['2:gamma', '1:beta', '3:Alpha']);
    expect(await sorted(list, { sort: 'playbook' })).toEqual(['3:Alpha', '2:gamma', '1:beta']);
    expect(await sorted(list, { sort: 'playbook', order: 'desc' })).toEqual(['1:beta', '2:gamma', '3:Alpha']);
  });
});
