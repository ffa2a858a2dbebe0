import { errorTexts } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { answeredError, createHarness, type Harness } from '../../../test/support/harness';
import { rejectInserts } from '../../../test/support/reject-inserts';
import {
  ansibleBody,
  createTemplatesProject,
  snapshot,
  type TemplatesProject,
} from '../../../test/support/template-fixtures';

// A template and its own cron schedule (`schedule` of the template body) are saved in one request and one
// transaction: both are stored with their events, or nothing is.

describe.each(testDialects())('template with its schedule on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
  });
  afterAll(async () => h?.close());

  const post = (extra: Record<string, unknown>) =>
    project.admin.request('POST', `${project.base}/templates`, ansibleBody(project.fx, extra));
  const put = (id: number, extra: Record<string, unknown>) =>
    project.admin.request('PUT', `${project.base}/templates/${id}`, ansibleBody(project.fx, extra));
  const schedulesOf = async (id: number) =>
    (await project.admin.get(`${project.base}/templates/${id}/schedules`)).json() as {
      id: number;
      cron_format: string;
      active: boolean;
      repository_id: number | null;
    }[];
  const eventsAbout = (objectType: string, objectId: number) =>
    h.deps.db
      .selectFrom('event')
      .select('description')
      .where('object_type', '=', objectType)
      .where('object_id', '=', objectId)
      .orderBy('id')
      .execute();
  const templateNamed = (name: string) =>
    h.deps.db.selectFrom('template').select('id').where('name', '=', name).execute();

  it('creates the template and its active schedule in one request, with both events', async () => {
    const res = await post({ name: 'Nightly', schedule: { cron_format: ' 0 3 * * * ' } });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as number;
    const schedules = await schedulesOf(id);
    expect(schedules).toEqual([
      expect.objectContaining({ cron_format: '0 3 * * *', active: true, repository_id: null }),
    ]);
    expect(await eventsAbout('template', id)).toEqual([{ description: 'Template Nightly created' }]);
    expect(await eventsAbout('schedule', schedules[0]!.id)).toHaveLength(1);
  });

  it('changes the cron, keeps it when the field is left out, and removes it with null', async () => {
    const id = (await post({ name: 'Weekly', schedule: { cron_format: '@daily' } })).json().id as number;
    const [created] = await schedulesOf(id);

    expect((await put(id, { name: 'Weekly', schedule: { cron_format: '@weekly' } })).statusCode).toBe(204);
    expect(await schedulesOf(id)).toEqual([
      expect.objectContaining({ id: created!.id, cron_format: '@weekly' }),
    ]);

    // What every Semaphore client sends: no schedule part, so the schedule stays.
    expect((await put(id, { name: 'Weekly renamed' })).statusCode).toBe(204);
    expect(await schedulesOf(id)).toEqual([expect.objectContaining({ cron_format: '@weekly' })]);

    expect((await put(id, { name: 'Weekly renamed', schedule: null })).statusCode).toBe(204);
    expect(await schedulesOf(id)).toEqual([]);
    expect(await eventsAbout('schedule', created!.id)).toHaveLength(3);
  });

  it('leaves schedules that check a repository to the check-new-commits option', async () => {
    const id = (
      await post({
        name: 'Commit checked',
        check_new_commits: true,
        check_new_commits_repository_id: project.fx.repository,
        cron_format: '*/5 * * * *',
        schedule: { cron_format: '@hourly' },
      })
    ).json().id as number;
    const schedules = await schedulesOf(id);
    expect(schedules.map((s) => [s.cron_format, s.repository_id])).toEqual([
      ['*/5 * * * *', project.fx.repository],
      ['@hourly', null],
    ]);
    expect((await put(id, { name: 'Commit checked', schedule: null })).statusCode).toBe(204);
    expect((await schedulesOf(id)).map((s) => s.repository_id)).toEqual([project.fx.repository]);
  });

  it('refuses an invalid schedule part with a 400 naming its field, and writes nothing', async () => {
    const before = await snapshot(h);
    for (const [schedule, field] of [
      [{ cron_format: '61 * * * *' }, 'schedule.cron_format'],
      [{ cron_format: '0 0 * * * *' }, 'schedule.cron_format'],
      [{ cron_format: '' }, 'schedule.cron_format'],
      [{ cron_format: 'x'.repeat(101) }, 'schedule.cron_format'],
      [{}, 'schedule.cron_format'],
      ['@daily', 'schedule'],
    ] as const) {
      const res = await post({ name: 'Refused', schedule });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().fields?.[field], res.body).toBe(res.json().error);
    }
    expect(await snapshot(h)).toEqual(before);
    expect(await templateNamed('Refused')).toEqual([]);
  });

  it('refuses a schedule that could not answer the survey, and writes nothing', async () => {
    const surveyVars = [{ name: 'target', title: 'Target', type: 'string', required: true }];
    const before = await snapshot(h);
    const res = await post({
      name: 'Asks',
      survey_vars: surveyVars,
      schedule: { cron_format: '@daily' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().fields?.schedule).toMatch(/cannot answer .* "Target"/);
    expect(await snapshot(h)).toEqual(before);

    // An edit that would add the schedule is refused whole: the template keeps its old name too.
    const id = (await post({ name: 'Asks', survey_vars: surveyVars })).json().id as number;
    const edited = await put(id, {
      name: 'Asks later',
      survey_vars: surveyVars,
      schedule: { cron_format: '@daily' },
    });
    expect(edited.statusCode, edited.body).toBe(400);
    expect(await templateNamed('Asks later')).toEqual([]);
    expect(await schedulesOf(id)).toEqual([]);
  });

  it('is described in the OpenAPI document as an optional part of the template body', async () => {
    const doc = (await project.admin.get('/api/openapi.json')).json();
    const path = Object.keys(doc.paths).find((p) => p.endsWith('/templates') && doc.paths[p].post);
    for (const operation of [doc.paths[path!].post, doc.paths[`${path}/{id}`].put]) {
      const body = operation.requestBody.content['application/json'].schema;
      expect(body.required ?? []).not.toContain('schedule');
      expect(JSON.stringify(body.properties.schedule)).toMatch(/cron_format/);
      expect(JSON.stringify(body.properties.schedule)).toMatch(/same transaction/);
    }
  });

  describe('when a write after the template fails', () => {
    const internal = (res: { statusCode: number; json(): unknown }) => {
      expect(res.statusCode).toBe(500);
      return res.json();
    };

    it('leaves no template behind when its schedule cannot be written', async () => {
      const before = await snapshot(h);
      const allow = await rejectInserts(h, 'schedule');
      try {
        const res = await post({ name: 'Half saved', schedule: { cron_format: '@daily' } });
        expect(internal(res)).toEqual(answeredError(res, { error: errorTexts.internal, code: 'internal' }));
      } finally {
        await allow();
      }
      expect(await templateNamed('Half saved')).toEqual([]);
      expect(await snapshot(h)).toEqual(before);
    });

    it('leaves no template behind when its event cannot be written', async () => {
      const before = await snapshot(h);
      const allow = await rejectInserts(h, 'event');
      try {
        internal(await post({ name: 'Unaudited' }));
      } finally {
        await allow();
      }
      expect(await snapshot(h)).toEqual(before);
    });

    it('keeps the template and its schedule when the event of its deletion cannot be written', async () => {
      const id = (await post({ name: 'Kept', schedule: { cron_format: '@daily' } })).json().id as number;
      const before = await snapshot(h);
      const allow = await rejectInserts(h, 'event');
      try {
        internal(await project.admin.del(`${project.base}/templates/${id}`));
      } finally {
        await allow();
      }
      expect(await snapshot(h)).toEqual(before);
    });

    it('keeps the template as it was when an edit cannot write the schedule', async () => {
      const id = (await post({ name: 'Stable' })).json().id as number;
      const before = await snapshot(h);
      const allow = await rejectInserts(h, 'schedule');
      try {
        internal(await put(id, { name: 'Stable renamed', schedule: { cron_format: '@daily' } }));
      } finally {
        await allow();
      }
      expect(await snapshot(h)).toEqual(before);
      // Once the database takes writes again, the same request saves both.
      expect(
        (await put(id, { name: 'Stable renamed', schedule: { cron_format: '@daily' } })).statusCode,
      ).toBe(204);
      expect(await templateNamed('Stable renamed')).toEqual([{ id }]);
      expect(await schedulesOf(id)).toHaveLength(1);
    });
  });
});
