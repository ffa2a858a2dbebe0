import { errorMessage } from '@signalbox/contracts';

/** The answer to a run-once time that is no date and time with a time zone. */
const RUN_AT_FORMAT = errorMessage({ code: 'invalid_date_offset', params: { field: 'run_at' } });

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import {
  ansibleBody,
  createTemplatesProject,
  latestEventsOf,
  snapshot,
  type TemplatesProject,
} from '../../../test/support/template-fixtures';
import type { SchedulerHandle } from '../../scheduler/scheduler';

/** An ISO time `minutes` from now, whole seconds, with the given UTC offset written out (e.g. +02:00). */
function inMinutes(minutes: number, offset = 'Z') {
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + minutes * 60_000);
  if (offset === 'Z') return { text: at.toISOString().replace('.000Z', 'Z'), utc: at.toISOString() };
  const sign = offset.startsWith('-') ? -1 : 1;
  const [hh, mm] = offset.slice(1).split(':').map(Number);
  const shifted = new Date(at.getTime() + sign * ((hh ?? 0) * 60 + (mm ?? 0)) * 60_000);
  return { text: `${shifted.toISOString().slice(0, 19)}${offset}`, utc: at.toISOString() };
}

describe.each(testDialects())('run-once schedules through the API on $name', (dialect) => {
  let h: Harness;
  let project: TemplatesProject;
  let templateId: number;
  let url: string;

  beforeAll(async () => {
    h = await createHarness(dialect);
    project = await createTemplatesProject(h);
    templateId = (
      await project.admin.post(`${project.base}/templates`, ansibleBody(project.fx, { name: 'Release' }))
    ).json().id;
    url = `${project.base}/schedules`;
  });
  afterAll(async () => h?.close());

  const planned = () => (h.deps.scheduler as SchedulerHandle).planned();

  it('creates one for a time given with any offset, stores it as UTC and arms the scheduler', async () => {
    const at = inMinutes(90, '+02:00');
    const res = await project.clients.manager.post(url, {
      type: 'run_at',
      template_id: templateId,
      run_at: at.text,
      // A cron sent along is dropped: a run-once schedule has none.
      cron_format: '* * * * *',
      name: 'Go live',
    });
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json();
    expect(s).toEqual({
      id: expect.any(Number),
      project_id: project.projectId,
      template_id: templateId,
      workflow_id: null,
      type: 'run_at',
      cron_format: '',
      run_at: at.utc,
      delete_after_run: false,
      last_run_at: null,
      run_missed: false,
      repository_id: null,
      name: 'Go live',
      active: true,
      tpl_name: 'Release',
      task_params: expect.objectContaining({ environment: '', message: '' }),
    });
    expect(planned().get(s.id)?.toISOString()).toBe(at.utc);
    expect((await project.clients.guest.get(url)).json()).toContainEqual(s);
    expect((await latestEventsOf(h, 'schedule', 1))[0]?.description).toBe(
      `Schedule Go live (once at ${at.utc}) of template Release created`,
    );
  });

  it('edits it to another time, to a cron schedule and back, with delete_after_run', async () => {
    const first = inMinutes(30);
    const s = (
      await project.admin.post(url, { type: 'run_at', template_id: templateId, run_at: first.text })
    ).json();
    const later = inMinutes(120);
    let res = await project.admin.put(`${url}/${s.id}`, {
      type: 'run_at',
      template_id: templateId,
      run_at: later.text,
      delete_after_run: true,
    });
    expect(res.statusCode, res.body).toBe(204);
    expect((await project.admin.get(`${url}/${s.id}`)).json()).toMatchObject({
      type: 'run_at',
      run_at: later.utc,
      delete_after_run: true,
    });
    expect(planned().get(s.id)?.toISOString()).toBe(later.utc);

    res = await project.admin.put(`${url}/${s.id}`, {
      template_id: templateId,
      cron_format: '@daily',
      run_at: later.text,
    });
    expect(res.statusCode, res.body).toBe(204);
    expect((await project.admin.get(`${url}/${s.id}`)).json()).toMatchObject({
      type: '',
      cron_format: '@daily',
      run_at: null,
      delete_after_run: false,
    });

    res = await project.admin.put(`${url}/${s.id}`, {
      type: 'run_at',
      template_id: templateId,
      run_at: first.text,
    });
    expect(res.statusCode, res.body).toBe(204);
    expect((await project.admin.get(`${url}/${s.id}`)).json()).toMatchObject({
      type: 'run_at',
      cron_format: '',
      run_at: first.utc,
    });
  });

  it('keeps a ran or missed one as a record, and arms it afresh when saved active with a new time', async () => {
    const s = (
      await project.admin.post(url, { type: 'run_at', template_id: templateId, run_at: inMinutes(5).text })
    ).json();
    // As the scheduler leaves it after a missed time.
    const past = '2020-05-01T08:00:00.000Z';
    await h.deps.db
      .updateTable('schedule')
      .set({ run_at: past, active: 0, run_missed: 1, last_tick: past })
      .where('id', '=', s.id)
      .execute();
    const record = { type: 'run_at', template_id: templateId, run_at: past, name: 'Renamed', active: false };
    const renamed = await project.admin.put(`${url}/${s.id}`, record);
    expect(renamed.statusCode, renamed.body).toBe(204);
    expect((await project.admin.get(`${url}/${s.id}`)).json()).toMatchObject({
      name: 'Renamed',
      active: false,
      run_missed: true,
      run_at: past,
    });

    const again = inMinutes(60);
    const res = await project.admin.put(`${url}/${s.id}`, { ...record, run_at: again.text, active: true });
    expect(res.statusCode, res.body).toBe(204);
    expect((await project.admin.get(`${url}/${s.id}`)).json()).toMatchObject({
      active: true,
      run_missed: false,
      run_at: again.utc,
    });
    const row = await h.deps.db
      .selectFrom('schedule')
      .select('last_tick')
      .where('id', '=', s.id)
      .executeTakeFirst();
    expect(row?.last_tick).toBeNull();
    expect(planned().get(s.id)?.toISOString()).toBe(again.utc);
  });

  it('refuses a time in the past, a bad format and a missing time with 400, changing nothing', async () => {
    const existing = (
      await project.admin.post(url, { type: 'run_at', template_id: templateId, run_at: inMinutes(10).text })
    ).json();
    const before = await snapshot(h);
    const base = { type: 'run_at', template_id: templateId };
    const cases: Array<[Record<string, unknown>, string | RegExp, Record<string, string>?]> = [
      [
        { ...base, run_at: '2020-01-01T10:00:00Z' },
        /^Run at must be in the future$/,
        { run_at: 'Run at must be in the future' },
      ],
      [{ ...base, run_at: inMinutes(-1).text }, /^Run at must be in the future/],
      [{ ...base, run_at: '2030-01-01 10:00:00' }, RUN_AT_FORMAT, { run_at: RUN_AT_FORMAT }],
      [{ ...base, run_at: '2030-01-01T10:00:00' }, RUN_AT_FORMAT],
      [{ ...base, run_at: '2030-02-30T10:00:00Z' }, RUN_AT_FORMAT],
      [{ ...base, run_at: 'tomorrow at noon' }, RUN_AT_FORMAT],
      [{ ...base, run_at: 1893456000 }, 'Run at must be a string'],
      [{ ...base, run_at: `2030-01-01T10:00:00Z${'0'.repeat(100)}` }, RUN_AT_FORMAT],
      [base, 'Run at is required', { run_at: 'Run at is required' }],
      [{ ...base, run_at: '' }, 'Run at is required'],
      [{ ...base, type: 'once', run_at: inMinutes(10).text }, 'Type must be one of run_at'],
      [
        { ...base, run_at: inMinutes(10).text, repository_id: project.fx.repository },
        'A run-once schedule cannot check a repository for new commits',
      ],
      [
        { ...base, run_at: inMinutes(10).text, delete_after_run: 'yes' },
        'Delete after run must be true or false',
      ],
    ];
    for (const [body, message, fields] of cases) {
      for (const res of [
        await project.admin.post(url, body),
        await project.admin.put(`${url}/${existing.id}`, body),
      ]) {
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        const answer = res.json();
        if (typeof message === 'string') expect(answer.error).toBe(message);
        else expect(answer.error).toMatch(message);
        if (fields) expect(answer.fields).toEqual(fields);
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('goes through a project backup and restore; one whose time passed comes back disabled', async () => {
    const ahead = inMinutes(180);
    const kept = await project.admin.post(url, {
      type: 'run_at',
      template_id: templateId,
      run_at: ahead.text,
      delete_after_run: true,
      name: 'Backed up',
    });
    expect(kept.statusCode, kept.body).toBe(201);
    const ran = (
      await project.admin.post(url, {
        type: 'run_at',
        template_id: templateId,
        run_at: inMinutes(5).text,
        name: 'Ran',
      })
    ).json();
    const past = '2020-05-01T08:00:00.000Z';
    await h.deps.db.updateTable('schedule').set({ run_at: past }).where('id', '=', ran.id).execute();

    const backup = (await project.admin.get(`${project.base}/backup`)).json();
    expect(backup.schedules).toContainEqual(
      expect.objectContaining({
        name: 'Backed up',
        type: 'run_at',
        run_at: ahead.utc,
        delete_after_run: true,
        cron_format: '',
      }),
    );
    const restored = await project.admin.post('/api/projects/restore', backup);
    expect(restored.statusCode, restored.body).toBe(200);
    const list = (await project.admin.get(`/api/project/${restored.json().id}/schedules`)).json();
    expect(list).toContainEqual(
      expect.objectContaining({
        name: 'Backed up',
        type: 'run_at',
        run_at: ahead.utc,
        active: true,
        delete_after_run: true,
      }),
    );
    expect(list).toContainEqual(
      expect.objectContaining({ name: 'Ran', type: 'run_at', run_at: past, active: false }),
    );
  });

  it('lets only managers create one', async () => {
    const body = { type: 'run_at', template_id: templateId, run_at: inMinutes(10).text };
    for (const role of ['task_runner', 'guest'] as const)
      expect((await project.clients[role].post(url, body)).statusCode, role).toBe(403);
  });
});
