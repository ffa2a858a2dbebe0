import { type PlanSummary, taskPlanSchema } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { rows } from '../../../test/support/scheduler-rows';
import { now } from '../../db/values';
import { deleteFinishedTasks } from '../../tasks/retention.store';
import { saveTaskPlan } from '../../tasks/terraform-plans.store';

const summary: PlanSummary = {
  format_version: '1.2',
  counts: { add: 1, change: 1, destroy: 1, replace: 1, read: 0, no_op: 2 },
  drift: 0,
  omitted: 0,
  changes: [
    {
      address: 'aws_instance.web',
      action: 'create',
      actions: ['create'],
      attributes: ['ami'],
      sensitive: [],
    },
    {
      address: 'aws_db_instance.main',
      action: 'update',
      actions: ['update'],
      attributes: ['password'],
      sensitive: ['password'],
    },
    { address: 'aws_lb.old', action: 'delete', actions: ['delete'], attributes: ['name'], sensitive: [] },
    {
      address: 'aws_instance.db',
      action: 'replace',
      actions: ['create', 'delete'],
      attributes: ['ami'],
      sensitive: [],
    },
  ],
};

describe.each(testDialects())('task plan summaries on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let guest: Client;
  let projectId: number;
  let planned: number;
  let unplanned: number;
  let foreignTask: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    owner = await h.userClient({ can_create_project: true });
    let members: Awaited<ReturnType<Harness['projectWithTeam']>>['members'];
    ({ projectId, members } = await h.projectWithTeam(owner));
    guest = members.guest;
    const make = rows(h.deps.db, h.deps.dialect);
    const template = await make.template(projectId, { app: 'terraform' });
    planned = await make.task(projectId, template, { status: 'waiting_confirmation', start: now() });
    unplanned = await make.task(projectId, template, { status: 'success', start: now(), end: now() });
    await saveTaskPlan(h.deps.db, null, { id: planned, project_id: projectId }, summary);

    const stranger = await h.userClient({ can_create_project: true });
    const other = await h.projectWithTeam(stranger, 'Elsewhere');
    const otherTemplate = await make.template(other.projectId, { app: 'terraform' });
    foreignTask = await make.task(other.projectId, otherTemplate, {
      status: 'success',
      start: now(),
      end: now(),
    });
    await saveTaskPlan(h.deps.db, null, { id: foreignTask, project_id: other.projectId }, summary);
  });
  afterAll(async () => h?.close());

  it("answers a task's plan summary to every member, in its schema", async () => {
    for (const client of [owner, guest]) {
      const res = await client.get(p(`/tasks/${planned}/plan`));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ ...summary, plan_file: null });
      expect(taskPlanSchema.safeParse(res.json()).success).toBe(true);
    }
  });

  it('keeping a summary again replaces the one kept', async () => {
    const again = { ...summary, counts: { ...summary.counts, add: 7 } };
    await saveTaskPlan(h.deps.db, null, { id: planned, project_id: projectId }, again);
    expect((await owner.get(p(`/tasks/${planned}/plan`))).json().counts.add).toBe(7);
    await saveTaskPlan(h.deps.db, null, { id: planned, project_id: projectId }, summary);
  });

  it('answers 404 with a code for a task without a plan, an unknown task and a bad id', async () => {
    const none = await owner.get(p(`/tasks/${unplanned}/plan`));
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({
      code: 'task_has_no_plan',
      error: `Task ${unplanned} has no plan summary`,
    });
    const unknown = await owner.get(p('/tasks/987654321/plan'));
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('not_found');
    const bad = await owner.get(p('/tasks/abc/plan'));
    expect(bad.statusCode).toBe(400);
  });

  it("never answers another project's task: 404, as for an unknown task", async () => {
    const res = await owner.get(p(`/tasks/${foreignTask}/plan`));
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
    expect(res.body).not.toContain('aws_instance');
    // Not a member of the other project either.
    const outsider = await h.userClient();
    const refused = await outsider.get(p(`/tasks/${planned}/plan`));
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('not_project_member');
    expect(refused.body).not.toContain('aws_instance');
  });

  it('deleting a task deletes its plan summary', async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const template = await make.template(projectId, { app: 'tofu' });
    const id = await make.task(projectId, template, { status: 'success', start: now(), end: now() });
    await saveTaskPlan(h.deps.db, null, { id, project_id: projectId }, summary);
    // Deleting a task is for administrators.
    const admin = await h.userClient({ admin: true });
    expect((await admin.request('DELETE', p(`/tasks/${id}`))).statusCode).toBe(204);
    const left = await h.deps.db
      .selectFrom('task_plan')
      .select('task_id')
      .where('task_id', '=', id)
      .execute();
    expect(left).toEqual([]);
  });

  it('retention, deleting the template and deleting the project delete the plan summaries with the tasks', async () => {
    const make = rows(h.deps.db, h.deps.dialect);
    const owned = await h.projectWithTeam(owner, 'Short-lived');
    const finished = { status: 'success', start: now(), end: now() };
    const kept = async (templateId: number) => {
      const id = await make.task(owned.projectId, templateId, finished);
      await saveTaskPlan(h.deps.db, null, { id, project_id: owned.projectId }, summary);
      return id;
    };
    const plansOf = async (ids: number[]) =>
      (await h.deps.db.selectFrom('task_plan').select('task_id').where('task_id', 'in', ids).execute())
        .length;
    const first = await make.template(owned.projectId, { app: 'terraform' });
    const old = await kept(first);
    await deleteFinishedTasks(h.deps.db, [old]);
    expect(await plansOf([old])).toBe(0);

    const second = await make.template(owned.projectId, { app: 'terraform' });
    const ofTemplate = await kept(second);
    const admin = await h.userClient({ admin: true });
    expect(
      (await admin.request('DELETE', `/api/project/${owned.projectId}/templates/${second}`)).statusCode,
    ).toBe(204);
    expect(await plansOf([ofTemplate])).toBe(0);

    const ofProject = await kept(first);
    expect((await owner.request('DELETE', `/api/project/${owned.projectId}`)).statusCode).toBe(204);
    expect(await plansOf([ofProject])).toBe(0);
    // The other project's summaries stay.
    expect(await plansOf([planned])).toBe(1);
  });
});
