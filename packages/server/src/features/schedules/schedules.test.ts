import { errorMessage } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import {
  expectStatusByCaller,
  manageResourceStatusTests,
  readCodes,
} from '../../../test/support/permission-matrix';
import {
  ansibleBody,
  createTemplatesProject,
  expectBodiesRefused,
  expectUpdateDeleteEvents,
  snapshot,
  type TemplateFixtures,
  type TemplatesProject,
  templateFixtures,
} from '../../../test/support/template-fixtures';
import { cronError } from './cron';

const MB = 'x'.repeat(1024 * 1024);
/** How a schedule answers task parameters it was given none of (Semaphore's TaskPrams blank, no inventory). */
const NO_TASK_PARAMS = {
  environment: '',
  message: '',
  git_branch: '',
  arguments: '',
  params: {},
};

/** The English wording of a cron problem, or null. */
const said = (problem: ReturnType<typeof cronError>) => (problem ? errorMessage(problem) : null);

describe('cronError', () => {
  it('accepts 5-field cron and the nicknames', () => {
    for (const cron of [
      '* * * * *',
      '*/5 * * * *',
      '0 0 * * *',
      '0 3 * * 1-5',
      '@hourly',
      '@daily',
      '@weekly',
      '@monthly',
      '@yearly',
    ])
      expect(cronError(cron), cron).toBeNull();
  });
  it('refuses seconds syntax, bad values, unknown nicknames and crons that never fire', () => {
    expect(said(cronError('0 0 * * * *'))).toMatch(/expected 5 fields .* got 6/);
    expect(said(cronError('* * * *'))).toMatch(/got 4/);
    expect(said(cronError('61 * * * *'))).toMatch(/minute/);
    expect(said(cronError('@sometimes'))).toMatch(/unknown nickname/);
    expect(said(cronError('0 0 31 2 *'))).toMatch(/never fires/);
    expect(said(cronError(''))).toBe('Cron is required');
  });
});

describe.each(testDialects())('schedules on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let templateId: number;
  let otherTemplateId: number;
  let foreign: TemplateFixtures;
  let foreignTemplateId: number;
  let foreignScheduleId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    templateId = (
      await project.admin.post(`${project.base}/templates`, ansibleBody(project.fx, { name: 'Nightly' }))
    ).json().id;
    otherTemplateId = (
      await project.admin.post(`${project.base}/templates`, ansibleBody(project.fx, { name: 'Weekly' }))
    ).json().id;
    const other = project.other;
    foreign = await templateFixtures(h, other.projectId);
    const otherBase = `/api/project/${other.projectId}`;
    foreignTemplateId = (await other.owner.post(`${otherBase}/templates`, ansibleBody(foreign))).json().id;
    foreignScheduleId = (
      await other.owner.post(`${otherBase}/schedules`, {
        template_id: foreignTemplateId,
        cron_format: '@daily',
      })
    ).json().id;
  });
  afterAll(async () => h?.close());

  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await project.admin.post(`${project.base}/schedules`, {
      template_id: templateId,
      cron_format: '0 0 * * *',
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };

  it('creates, lists with tpl_name, reads, updates and deletes a schedule, refreshing the scheduler', async () => {
    const refresh = vi.spyOn(h.deps.scheduler, 'refresh');
    const res = await project.clients.manager.post(`${project.base}/schedules`, {
      project_id: project.projectId,
      template_id: templateId,
      cron_format: ' 0 0 * * * ',
      name: 'Midnight',
    });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    expect(s).toEqual({
      id: expect.any(Number),
      project_id: project.projectId,
      template_id: templateId,
      workflow_id: null,
      type: '',
      cron_format: '0 0 * * *',
      run_at: null,
      delete_after_run: false,
      last_run_at: null,
      run_missed: false,
      repository_id: null,
      name: 'Midnight',
      active: true,
      tpl_name: 'Nightly',
      task_params: NO_TASK_PARAMS,
    });
    expect(refresh).toHaveBeenCalledTimes(1);

    const list = await project.clients.guest.get(`${project.base}/schedules`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toContainEqual(s);
    expect(list.json().some((x: { id: number }) => x.id === foreignScheduleId)).toBe(false);
    expect((await project.clients.guest.get(`${project.base}/schedules/${s.id}`)).json()).toEqual(s);

    const upd = await project.clients.owner.put(`${project.base}/schedules/${s.id}`, {
      id: s.id,
      project_id: project.projectId,
      template_id: otherTemplateId,
      cron_format: '@weekly',
      repository_id: project.fx.repository,
      active: false,
    });
    expect(upd.statusCode).toBe(204);
    expect(refresh).toHaveBeenCalledTimes(2);
    expect((await project.admin.get(`${project.base}/schedules/${s.id}`)).json()).toEqual({
      ...s,
      template_id: otherTemplateId,
      cron_format: '@weekly',
      repository_id: project.fx.repository,
      name: '',
      active: false,
      tpl_name: 'Weekly',
    });

    expect((await project.admin.del(`${project.base}/schedules/${s.id}`)).statusCode).toBe(204);
    expect(refresh).toHaveBeenCalledTimes(3);
    expect((await project.admin.get(`${project.base}/schedules/${s.id}`)).statusCode).toBe(404);
    refresh.mockRestore();
  });

  it("keeps the task parameters given, and refuses bad ones or another project's inventory", async () => {
    const taskParams = {
      environment: '{"REGION":"eu"}',
      message: 'nightly build',
      git_branch: 'release',
      inventory_id: project.fx.inventory,
      arguments: '["-v"]',
      params: { debug: true },
    };
    const s = await create({ task_params: taskParams });
    expect(s.task_params).toEqual(taskParams);
    expect((await project.admin.get(`${project.base}/schedules/${s.id}`)).json().task_params).toEqual(
      taskParams,
    );
    // Blank text and empty lists read as not set.
    const upd = await project.admin.put(`${project.base}/schedules/${s.id}`, {
      id: s.id,
      template_id: templateId,
      cron_format: '0 0 * * *',
      task_params: { environment: ' ', message: 'only this', arguments: '', params: {} },
    });
    expect(upd.statusCode, upd.body).toBe(204);
    expect((await project.admin.get(`${project.base}/schedules/${s.id}`)).json().task_params).toEqual({
      ...NO_TASK_PARAMS,
      message: 'only this',
    });

    const before = await snapshot(h);
    for (const [task_params, fields] of [
      [{ inventory_id: foreign.inventory }, { 'task_params.inventory_id': 'Inventory not found' }],
      [{ environment: '["a"]' }, { 'task_params.environment': 'Extra variables must be a JSON object' }],
      [{ arguments: '{"a":1}' }, { 'task_params.arguments': 'CLI args must be a JSON array' }],
      ['text', { task_params: 'Task params must be an object' }],
    ] as const) {
      const res = await project.admin.post(`${project.base}/schedules`, {
        template_id: templateId,
        cron_format: '@daily',
        task_params,
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().fields, JSON.stringify(task_params)).toEqual(fields);
    }
    expect(await snapshot(h)).toEqual(before);
    await project.admin.del(`${project.base}/schedules/${s.id}`);
  });

  it('forgets the last commit when the repository changes', async () => {
    const s = await create({ repository_id: project.fx.repository });
    await h.deps.db.updateTable('schedule').set({ last_commit_hash: 'abc' }).where('id', '=', s.id).execute();
    const body = { template_id: templateId, cron_format: '@hourly', repository_id: project.fx.repository };
    await project.admin.put(`${project.base}/schedules/${s.id}`, body);
    const row = () =>
      h.deps.db.selectFrom('schedule').select('last_commit_hash').where('id', '=', s.id).executeTakeFirst();
    expect((await row())?.last_commit_hash).toBe('abc');
    await project.admin.put(`${project.base}/schedules/${s.id}`, {
      ...body,
      repository_id: project.fx.otherRepository,
    });
    expect((await row())?.last_commit_hash).toBeNull();
  });

  it('validates a cron with POST schedules/validate', async () => {
    for (const cron of ['* * * * *', '*/5 * * * *', '@daily', '0 0 1 1 *']) {
      const res = await project.clients.guest.post(`${project.base}/schedules/validate`, {
        cron_format: cron,
      });
      expect(res.statusCode, cron).toBe(204);
    }
    const six = await project.admin.post(`${project.base}/schedules/validate`, {
      cron_format: '*/10 * * * * *',
    });
    expect(six.statusCode).toBe(400);
    expect(six.json().error).toBe(
      'Invalid cron expression "*/10 * * * * *": expected 5 fields (minute hour day month weekday), got 6',
    );
    const bad = await project.admin.post(`${project.base}/schedules/validate`, { cron_format: '99 * * * *' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^Invalid cron expression "99 \* \* \* \*": .*minute/);
    expect(
      (await project.admin.post(`${project.base}/schedules/validate`, { cron_format: '' })).json().error,
    ).toBe('Cron is required');
    expect((await project.admin.post(`${project.base}/schedules/validate`, {})).json().error).toBe(
      'Cron is required',
    );
    expect(
      (await project.admin.post(`${project.base}/schedules/validate`, { cron_format: MB })).statusCode,
    ).toBe(400);
    expect((await project.admin.request('POST', `${project.base}/schedules/validate`, '{')).statusCode).toBe(
      400,
    );
  });

  it('answers the validation messages and changes nothing', async () => {
    const s = await create();
    const before = await snapshot(h);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ cron_format: '@daily' }, 'Template is required'],
      [{ template_id: 0, cron_format: '@daily' }, 'Template is required'],
      [{ template_id: null, cron_format: '@daily' }, 'Template is required'],
      [{ template_id: templateId }, 'Cron is required'],
      [{ template_id: templateId, cron_format: '  ' }, 'Cron is required'],
      [
        { template_id: templateId, cron_format: '61 * * * *' },
        'Invalid cron expression "61 * * * *": Invalid value for minute: 61',
      ],
      [
        { template_id: templateId, cron_format: '0 0 * * * *' },
        'Invalid cron expression "0 0 * * * *": expected 5 fields (minute hour day month weekday), got 6',
      ],
      [
        { template_id: foreignTemplateId, cron_format: '@daily' },
        `Template ${foreignTemplateId} does not exist in this project`,
      ],
      [{ template_id: 999999, cron_format: '@daily' }, 'Template 999999 does not exist in this project'],
      [
        { template_id: templateId, cron_format: '@daily', repository_id: foreign.repository },
        `Repository ${foreign.repository} does not exist in this project`,
      ],
      [
        { template_id: templateId, cron_format: '@daily', project_id: 999 },
        'Project ID in body and URL are different',
      ],
    ];
    for (const [body, message] of cases) {
      for (const res of [
        await project.admin.post(`${project.base}/schedules`, body),
        await project.admin.put(`${project.base}/schedules/${s.id}`, body),
      ]) {
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(res.json().error).toBe(message);
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses wrong types, malformed JSON and 1 MB strings, changing nothing', async () => {
    const s = await create();
    const before = await snapshot(h);
    const bodies: unknown[] = [
      { template_id: 'one', cron_format: '@daily' },
      { template_id: templateId, cron_format: 5 },
      { template_id: templateId, cron_format: '@daily', repository_id: 'x' },
      { template_id: templateId, cron_format: '@daily', active: 'yes' },
      { template_id: templateId, cron_format: '@daily', name: 7 },
      { template_id: templateId, cron_format: MB },
      { template_id: templateId, cron_format: '@daily', name: MB },
      '{"template_id": 1',
      'null',
      '[]',
    ];
    await expectBodiesRefused(
      project.admin,
      `${project.base}/schedules`,
      `${project.base}/schedules/${s.id}`,
      bodies,
    );
    expect(await snapshot(h)).toEqual(before);
  });

  it('answers 404 for a schedule of another project or an unknown id', async () => {
    const before = await snapshot(h);
    for (const id of [foreignScheduleId, 999999]) {
      expect((await project.admin.get(`${project.base}/schedules/${id}`)).json()).toMatchObject({
        error: 'Schedule not found',
      });
      const put = await project.admin.put(`${project.base}/schedules/${id}`, {
        template_id: templateId,
        cron_format: '@daily',
      });
      expect(put.statusCode).toBe(404);
      expect((await project.admin.del(`${project.base}/schedules/${id}`)).statusCode).toBe(404);
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('records an event for every change', async () => {
    const s = await create({ name: 'Audit' });
    await expectUpdateDeleteEvents(
      h,
      project.admin,
      'schedule',
      `${project.base}/schedules/${s.id}`,
      s.id,
      { template_id: templateId, cron_format: '@daily', name: 'Audit' },
      [
        'Schedule Audit (@daily) of template Nightly deleted',
        'Schedule Audit (@daily) of template Nightly updated',
        'Schedule Audit (0 0 * * *) of template Nightly created',
      ],
    );
  });

  describe('permission matrix', () => {
    it('reads and validate: members only', async () => {
      const s = await create();
      for (const path of ['/schedules', `/schedules/${s.id}`]) {
        await expectStatusByCaller(project.clients, readCodes(), (c) => c.get(`${project.base}${path}`));
      }
      await expectStatusByCaller(project.clients, readCodes(204), (c) =>
        c.post(`${project.base}/schedules/validate`, { cron_format: '@daily' }),
      );
    });

    manageResourceStatusTests(() => project, 'schedules', {
      body: (_caller, method) => ({
        template_id: templateId,
        cron_format: method === 'POST' ? '@daily' : '@hourly',
      }),
      updated: async () => (await create()).id,
      deleted: async () => (await create()).id,
    });
  });
});
