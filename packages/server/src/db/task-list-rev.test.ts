import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertProjects, migratedDb } from '../../test/support/migrated-db';
import { insertRunner } from '../../test/support/runner-rows';
import { insertTemplate, taskRow } from '../../test/support/task-fixtures';
import { NAMES_SCOPE } from '../tasks/store';
import type { DbHandle } from '.';
import { insertReturningId, now } from './values';

describe.each(testDialects())('the revision of what task lists show on $name', (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  let project: number;
  let other: number;
  let template: number;
  let otherTemplate: number;

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'task-list-rev'));
    [project, other] = (await insertProjects(handle, ['listed', 'other'])) as [number, number];
    template = await insertTemplate(handle, project, { name: 'Deploy' });
    otherTemplate = await insertTemplate(handle, other, { name: 'Elsewhere' });
  });
  afterAll(async () => close?.());

  const revision = async (scope: number) =>
    (await handle.db.selectFrom('task_list_rev').select('rev').where('scope', '=', scope).executeTakeFirst())
      ?.rev;
  const addTask = (projectId: number, templateId: number) =>
    insertReturningId(handle.db, handle.dialect, 'task', taskRow(projectId, templateId));

  it("moves once for each task added, changed by anyone or removed, and only that project's", async () => {
    expect(await revision(project)).toBeUndefined();
    const first = await addTask(project, template);
    const second = await addTask(project, template);
    expect(await revision(project)).toBe(2);
    // A change written by SQL outside the server counts as one through it does, whatever the column.
    await handle.db.updateTable('task').set({ status: 'success' }).where('id', '=', first).execute();
    expect(await revision(project)).toBe(3);
    await handle.db.updateTable('task').set({ message: 'done' }).where('id', '=', first).execute();
    expect(await revision(project)).toBe(4);
    await handle.db.deleteFrom('task').where('id', '=', second).execute();
    expect(await revision(project)).toBe(5);
    expect(await revision(other)).toBeUndefined();
    const elsewhere = await addTask(other, otherTemplate);
    expect(await revision(other)).toBe(1);
    expect(await revision(project)).toBe(5);
    // One statement over the tasks of both projects moves both.
    await handle.db
      .updateTable('task')
      .set({ control: null })
      .where('id', 'in', [first, elsewhere])
      .execute();
    expect(await revision(project)).toBeGreaterThan(5);
    expect(await revision(other)).toBeGreaterThan(1);
    // An update that matches no task moves nothing.
    const [mine, theirs] = [await revision(project), await revision(other)];
    await handle.db.updateTable('task').set({ message: 'none' }).where('id', '=', -1).execute();
    expect([await revision(project), await revision(other)]).toEqual([mine, theirs]);
    // Neither do the templates' own changes (they have their own revision).
    await handle.db.updateTable('template').set({ name: 'Deploy web' }).where('id', '=', template).execute();
    expect(await revision(project)).toBe(mine);
  });

  it('moves its names scope when a user or a runner is renamed or removed, not for their other changes', async () => {
    const user = await insertReturningId(handle.db, handle.dialect, 'user', {
      created: now(),
      username: 'starter',
      name: 'Starter',
      email: 'starter@example.test',
      password: '',
      admin: 0,
      alert: 0,
      external: 0,
      can_create_project: 0,
    });
    const runner = await insertRunner(handle.db, { project_id: project, name: 'edge-1' });
    const names = () => revision(NAMES_SCOPE);
    const start = (await names()) ?? 0;
    await handle.db.updateTable('user').set({ email: 'other@example.test' }).where('id', '=', user).execute();
    await handle.db.updateTable('remote_runner').set({ webhook: 'x' }).where('id', '=', runner).execute();
    await handle.db.updateTable('user').set({ name: 'Starter' }).where('id', '=', user).execute();
    expect((await names()) ?? 0).toBe(start);
    await handle.db.updateTable('user').set({ name: 'Starter Renamed' }).where('id', '=', user).execute();
    expect(await names()).toBe(start + 1);
    await handle.db.updateTable('remote_runner').set({ name: 'edge-2' }).where('id', '=', runner).execute();
    expect(await names()).toBe(start + 2);
    await handle.db.deleteFrom('remote_runner').where('id', '=', runner).execute();
    expect(await names()).toBe(start + 3);
    await handle.db.deleteFrom('user').where('id', '=', user).execute();
    expect(await names()).toBe(start + 4);
  });
});
