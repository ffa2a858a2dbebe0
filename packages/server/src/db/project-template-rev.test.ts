import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { insertProjects, migratedDb } from '../../test/support/migrated-db';
import { insertTemplate, taskRow } from '../../test/support/task-fixtures';
import type { DbHandle } from '.';
import { insertReturningId } from './values';

describe.each(testDialects())("the revision of a project's templates on $name", (dialect) => {
  let handle: DbHandle;
  let close: (() => Promise<void>) | undefined;
  let project: number;
  let other: number;

  beforeAll(async () => {
    ({ handle, close } = await migratedDb(dialect, 'template-rev'));
    [project, other] = (await insertProjects(handle, ['kept', 'other'])) as [number, number];
  });
  afterAll(async () => close?.());

  const revision = async (projectId: number) =>
    (
      await handle.db
        .selectFrom('project_template_rev')
        .select('rev')
        .where('project_id', '=', projectId)
        .executeTakeFirst()
    )?.rev;

  it("moves when a template is added, changed by anyone or removed, and only that project's", async () => {
    expect(await revision(project)).toBeUndefined();
    const first = await insertTemplate(handle, project, { name: 'Deploy' });
    const second = await insertTemplate(handle, project, { name: 'Build' });
    expect(await revision(project)).toBe(2);
    // A change written by SQL outside the server counts as one through it does.
    await handle.db.updateTable('template').set({ name: 'Deploy web' }).where('id', '=', first).execute();
    expect(await revision(project)).toBe(3);
    await handle.db.deleteFrom('template').where('id', '=', second).execute();
    expect(await revision(project)).toBe(4);
    expect(await revision(other)).toBeUndefined();
    await insertTemplate(handle, other, { name: 'Elsewhere' });
    expect(await revision(other)).toBe(1);
    expect(await revision(project)).toBe(4);
  });

  it("stays while the templates' tasks come, change and go (their counters are not a change of the template)", async () => {
    const template = await insertTemplate(handle, project, { name: 'Busy' });
    const before = await revision(project);
    const count = async () =>
      Number(
        (
          await handle.db
            .selectFrom('template')
            .select('task_count')
            .where('id', '=', template)
            .executeTakeFirstOrThrow()
        ).task_count,
      );
    const task = await insertReturningId(handle.db, handle.dialect, 'task', taskRow(project, template));
    // The counter moved (its trigger ran), the revision did not.
    expect(await count()).toBe(1);
    expect(await revision(project)).toBe(before);
    await handle.db.updateTable('task').set({ status: 'success' }).where('id', '=', task).execute();
    await handle.db.deleteFrom('task').where('id', '=', task).execute();
    expect(await count()).toBe(0);
    expect(await revision(project)).toBe(before);
  });
});
