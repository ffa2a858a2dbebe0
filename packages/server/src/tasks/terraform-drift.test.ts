import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import { ManualClock } from '../../test/support/manual-clock';
import {
  gitRepo,
  insertInventory,
  insertRepository,
  outputOf,
  toolsOnPath,
  waitFor,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { harnessWithProject, insertSecretEnvironment } from '../../test/support/task-runs';
import { terraformScript } from '../../test/support/terraform-stand-in';
import { alertsIdle } from '../alerts/alerts';
import { createScheduler } from '../scheduler/scheduler';

/** A resource change of a plan's JSON (Terraform's documented format). */
const change = (address: string, actions: string[], before: unknown, after: unknown) => {
  const [type, name] = address.split('.');
  return {
    address,
    mode: 'managed',
    type,
    name,
    provider_name: 'registry.terraform.io/hashicorp/aws',
    change: { actions, before, after, after_unknown: {}, before_sensitive: {}, after_sensitive: {} },
  };
};

/** A refresh-only plan: three resources changed outside Terraform. */
const driftPlan = {
  format_version: '1.2',
  terraform_version: '1.9.5',
  resource_drift: [
    change(
      'aws_s3_bucket.logs',
      ['update'],
      { bucket: 'logs', tags: { Owner: 'ops', LastScanned: '2026-11-01' } },
      { bucket: 'logs', tags: { Owner: 'dev', LastScanned: '2026-11-28' } },
    ),
    change('aws_autoscaling_group.web', ['update'], { desired_capacity: 2 }, { desired_capacity: 5 }),
    change(
      'aws_security_group.db',
      ['update'],
      { tags: { LastScanned: 'a' } },
      { tags: { LastScanned: 'b' } },
    ),
    change('aws_instance.gone', ['delete'], { ami: 'ami-1' }, null),
  ],
  resource_changes: [],
};

/** The plan after the refresh: one resource differs from the configuration. */
const changePlan = {
  format_version: '1.2',
  terraform_version: '1.9.5',
  resource_changes: [
    change(
      'aws_instance.web',
      ['update'],
      { instance_type: 't3.micro', ami: 'ami-1' },
      { instance_type: 't3.small', ami: 'ami-1' },
    ),
    change('aws_autoscaling_group.web', ['update'], { desired_capacity: 5 }, { desired_capacity: 2 }),
    change('null_resource.same', ['no-op'], { id: '1' }, { id: '1' }),
  ],
};

/** A chat receiver on 127.0.0.1 that records every request. */
async function startReceiver() {
  const received: { path: string; body: Record<string, unknown> }[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: raw ? JSON.parse(raw) : {} });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Drift detection: a template's drift check schedule runs a refresh-only plan and a plan in plan-only mode, judges
 * drift from their JSON under the template's ignore rules, shows it (badge, drift view) and alerts once.
 */
describe.each(testDialects())('Terraform drift checks on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let guest: Client;
  let runner: Client;
  let projectId: number;
  let repoId: number;
  let envId: number;
  let invId: number;
  let record: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let restorePath = () => {};
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({ terraform: terraformScript }));
    receiver = await startReceiver();
    let members: Record<string, Client>;
    ({ h, owner, projectId, members } = await harnessWithProject(dialect, {
      webhookAlert: true,
      webhookUrl: `${receiver.base}/hook`,
    }));
    guest = members.guest as Client;
    runner = members.task_runner as Client;
    await h.deps.db.updateTable('project').set({ alert: 1 }).where('id', '=', projectId).execute();
    const repo = gitRepo({
      'drifted/main.tf': '# drifted\n',
      'drifted/drift.json': JSON.stringify(driftPlan),
      'drifted/plan.json': JSON.stringify(changePlan),
      'clean/main.tf': '# in sync\n',
      'clean/nochanges': '',
    });
    repoId = await insertRepository(h.deps, projectId, { git_url: `file://${repo}` });
    envId = await insertSecretEnvironment(h.deps, projectId, { json: {} }, { vars: {} });
    invId = await insertInventory(h.deps, projectId, { type: 'terraform-workspace', inventory: 'prod' });
  });
  afterAll(async () => {
    restorePath();
    await receiver?.close();
    await h?.close();
  });

  const body = (extra: Record<string, unknown>) => ({
    name: `Infra ${Math.random().toString(36).slice(2, 8)}`,
    app: 'terraform',
    playbook: 'drifted',
    inventory_id: invId,
    repository_id: repoId,
    environment_id: envId,
    ...extra,
  });
  const driftParams = {
    drift_check: true,
    drift_cron: '*/5 * * * *',
    drift_ignore_addresses: ['aws_autoscaling_group.*'],
    drift_ignore_attributes: ['tags.LastScanned'],
  };
  async function create(extra: Record<string, unknown>) {
    const res = await owner.post(p('/templates'), body(extra));
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; task_params: Record<string, unknown>; drift: string | null };
  }
  const driftScheduleOf = (templateId: number) =>
    h.deps.db
      .selectFrom('schedule')
      .selectAll()
      .where('template_id', '=', templateId)
      .where('type', '=', 'drift')
      .execute();

  /** Fires the template's drift schedule through the scheduler; the task it started. */
  async function tick(templateId: number) {
    const clock = new ManualClock('2026-11-29T10:01:00Z');
    const scheduler = createScheduler(h.deps, { clock });
    try {
      await scheduler.start();
      clock.advanceTo('2026-11-29T10:05:00Z');
      await scheduler.idle();
    } finally {
      await scheduler.close();
    }
    const task = await h.deps.db
      .selectFrom('task')
      .selectAll()
      .where('template_id', '=', templateId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const end = await waitForStatus(h.deps, task.id, ['success', 'error', 'stopped']);
    return { ...task, ...end, log: (await outputOf(h.deps, task.id)).join('\n') };
  }

  it('keeps the drift option as a schedule of its own, off the schedule API; refuses bad settings', async () => {
    const t = await create({ task_params: driftParams });
    expect(t.task_params).toMatchObject(driftParams);
    expect(t.drift).toBeNull();
    const schedules = await driftScheduleOf(t.id);
    expect(schedules.map((s) => [s.cron_format, s.active, JSON.parse(s.task_params ?? '{}')])).toEqual([
      ['*/5 * * * *', 1, { params: { drift_check: true } }],
    ]);
    const listed = (await owner.get(p('/schedules'))).json() as { id: number }[];
    expect(listed.map((s) => s.id)).not.toContain(schedules[0]?.id);
    expect((await owner.get(p(`/schedules/${schedules[0]?.id}`))).statusCode).toBe(404);

    // A changed cron changes that schedule; the option off removes it.
    const put = (task_params: Record<string, unknown>) =>
      owner.put(p(`/templates/${t.id}`), { id: t.id, ...body({ name: `Infra ${t.id}`, task_params }) });
    expect((await put({ ...driftParams, drift_cron: '0 3 * * *' })).statusCode).toBe(204);
    expect((await driftScheduleOf(t.id)).map((s) => s.cron_format)).toEqual(['0 3 * * *']);
    expect((await put({})).statusCode).toBe(204);
    expect(await driftScheduleOf(t.id)).toEqual([]);

    const refusals: [Record<string, unknown>, string, string][] = [
      [{ ...driftParams, drift_cron: 'every day' }, 'task_params.drift_cron', ''],
      [{ ...driftParams, drift_cron: '' }, 'task_params.drift_cron', ''],
      [{ ...driftParams, drift_ignore_addresses: ['ok', 'x'.repeat(256)] }, '', 'drift_pattern_invalid'],
      [{ ...driftParams, drift_ignore_attributes: ['bad\u0001'] }, '', 'drift_pattern_invalid'],
      [{ ...driftParams, drift_ignore_attributes: 'tags' }, '', 'drift_pattern_invalid'],
      [{ plan_ttl_hours: 0 }, '', 'plan_ttl_invalid'],
      [{ plan_ttl_hours: 721 }, '', 'plan_ttl_invalid'],
      [{ plan_ttl_hours: 1.5 }, '', 'plan_ttl_invalid'],
      [{ plan_ttl_hours: '24' }, '', 'plan_ttl_invalid'],
    ];
    for (const [task_params, field, code] of refusals) {
      const res = await owner.post(p('/templates'), body({ task_params }));
      expect(res.statusCode, JSON.stringify(task_params)).toBe(400);
      if (field) expect(Object.keys(res.json().field_errors ?? {})).toContain(field);
      if (code) expect(res.json().code).toBe(code);
    }
    const other = await owner.post(
      p('/templates'),
      body({ app: 'bash', playbook: 'a.sh', inventory_id: null, task_params: driftParams }),
    );
    expect(other.statusCode).toBe(400);
    expect(other.json().code).toBe('drift_needs_terraform');
  });

  it('a scheduled check judges drift under the ignore rules, shows it and alerts once', async () => {
    const t = await create({ task_params: driftParams });
    const before = receiver.received.length;
    const check = await tick(t.id);
    expect(check.status, check.log).toBe('success');
    expect(check.schedule_id).toBe((await driftScheduleOf(t.id))[0]?.id);
    expect(JSON.parse(check.params ?? '{}')).toMatchObject({ drift_check: true });
    // The tick fires every drift schedule of the server, so another template's check may run alongside and write to
    // the same record: only this task's commands (its plans are in its own folder).
    const commands = readFileSync(record, 'utf8')
      .split('\n')
      .filter((line) => line.includes(`/tasks/${check.id}/`))
      .map((l) => l.replace(/\/\S*\/(signalbox(-refresh)?\.tfplan)/g, '<$1>'));
    expect(commands.slice(-4)).toEqual([
      'terraform plan -lock-timeout=5m -refresh-only -detailed-exitcode -out=<signalbox-refresh.tfplan>',
      'terraform show -json <signalbox-refresh.tfplan>',
      'terraform plan -lock-timeout=5m -detailed-exitcode -out=<signalbox.tfplan>',
      'terraform show -json <signalbox.tfplan>',
    ]);
    expect(check.log).toContain(
      "Drift found: 3 resources differ from the configuration or the state (3 ignored by the template's rules)",
    );

    const drift = await guest.get(p(`/templates/${t.id}/drift`));
    expect(drift.statusCode, drift.body).toBe(200);
    const view = drift.json();
    expect(view).toMatchObject({
      template_id: t.id,
      status: 'drifted',
      drifted: true,
      task_id: check.id,
      ignored: 3,
      omitted: 0,
    });
    expect(view.since).toBe(view.checked_at);
    expect(view.resources).toEqual([
      { address: 'aws_s3_bucket.logs', kind: 'drift', action: 'update', paths: ['tags.Owner'] },
      { address: 'aws_instance.gone', kind: 'drift', action: 'delete', paths: [] },
      { address: 'aws_instance.web', kind: 'change', action: 'update', paths: ['instance_type'] },
    ]);
    // Never values: the drift view and the stored report name paths only.
    expect(drift.body).not.toContain('dev');
    expect(drift.body).not.toContain('t3.small');

    // The badge of the template lists.
    const listed = (await owner.get(p('/templates'))).json() as { id: number; drift: string | null }[];
    expect(listed.find((x) => x.id === t.id)?.drift).toBe('drifted');

    // One alert through the project's channels (a local webhook receiver), naming what drifted.
    await waitFor(async () => {
      await alertsIdle(h.deps);
      return receiver.received.slice(before).some((r) => r.body.event === 'drift') || undefined;
    });
    const alerts = receiver.received.slice(before).filter((r) => r.body.event === 'drift');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.body).toMatchObject({
      event: 'drift',
      status: 'drift',
      template: { name: expect.stringMatching(/^Infra /) },
      drift: {
        since: view.since,
        resources: 3,
        addresses: ['aws_s3_bucket.logs', 'aws_instance.gone', 'aws_instance.web'],
      },
    });
    expect(String(alerts[0]?.body.text)).toContain(
      'aws_s3_bucket.logs (changed outside Terraform): tags.Owner',
    );

    // The same drift again: since stays, no second alert.
    const again = await tick(t.id);
    expect(again.status).toBe('success');
    await alertsIdle(h.deps);
    const second = (await owner.get(p(`/templates/${t.id}/drift`))).json();
    expect(second.since).toBe(view.since);
    expect(second.task_id).toBe(again.id);
    expect(receiver.received.slice(before).filter((r) => r.body.event === 'drift')).toHaveLength(1);
  });

  it('a check that finds nothing (or only what the rules ignore) leaves the template in sync', async () => {
    const clean = await create({ playbook: 'clean', task_params: driftParams });
    const check = await tick(clean.id);
    expect(check.status, check.log).toBe('success');
    expect(check.log).toContain('No drift');
    expect((await owner.get(p(`/templates/${clean.id}/drift`))).json()).toMatchObject({
      status: 'in_sync',
      since: null,
      resources: [],
    });
    // Ignoring every drifted resource by address, and the one change by attribute path: in sync.
    const ignored = await create({
      task_params: {
        ...driftParams,
        drift_ignore_addresses: ['aws_*'],
      },
    });
    const check2 = await tick(ignored.id);
    expect(check2.status, check2.log).toBe('success');
    const view = (await owner.get(p(`/templates/${ignored.id}/drift`))).json();
    expect(view).toMatchObject({ status: 'in_sync', ignored: 6 });
    const listed = (await owner.get(p('/templates'))).json() as { id: number; drift: string | null }[];
    expect(listed.find((x) => x.id === ignored.id)?.drift).toBe('in_sync');
  });

  it('a project backup keeps the drift settings, not the schedule; a restore makes the schedule again', async () => {
    const t = await create({ task_params: driftParams });
    const backup = (await owner.get(p('/backup'))).json();
    const tpl = backup.templates.find(
      (x: { task_params: Record<string, unknown> }) => x.task_params.drift_check,
    );
    expect(tpl.task_params).toMatchObject(driftParams);
    expect(tpl.cron).toBeNull();
    expect(backup.schedules).toEqual([]);
    const restored = await owner.post('/api/projects/restore', {
      ...backup,
      meta: { ...backup.meta, name: 'Copy' },
    });
    expect(restored.statusCode, restored.body).toBe(200);
    const copy = restored.json().id as number;
    const rows = await h.deps.db.selectFrom('schedule').selectAll().where('project_id', '=', copy).execute();
    const templates = (await owner.get(`/api/project/${copy}/templates`)).json() as {
      id: number;
      name: string;
      task_params: Record<string, unknown>;
    }[];
    // One drift schedule for each restored template whose settings check for drift, and nothing else.
    const checked = templates.filter((x) => x.task_params.drift_check === true);
    expect(checked.map((x) => x.name)).toContain((t as unknown as { name: string }).name);
    expect(rows.map((r) => [r.template_id, r.type, r.cron_format]).sort()).toEqual(
      checked.map((x) => [x.id, 'drift', '*/5 * * * *']).sort(),
    );
    expect((await owner.get(`/api/project/${copy}/schedules`)).json()).toEqual([]);
  });

  it('reconcile starts the normal plan, confirm, apply flow; refused for other apps and without rights', async () => {
    const t = await create({ task_params: driftParams });
    const none = await owner.get(p(`/templates/${t.id}/drift`));
    expect(none.statusCode).toBe(404);
    expect(none.json()).toMatchObject({ code: 'template_has_no_drift', params: { id: t.id } });
    expect((await guest.post(p(`/templates/${t.id}/reconcile`))).statusCode).toBe(403);
    const res = await runner.post(p(`/templates/${t.id}/reconcile`));
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as number;
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    expect((await owner.post(p(`/tasks/${id}/confirm`), {})).statusCode).toBe(204);
    expect((await waitForStatus(h.deps, id, ['success', 'error'])).status).toBe('success');
    const other = await create({ app: 'bash', playbook: 'a.sh', inventory_id: null, task_params: {} });
    const refused = await runner.post(p(`/templates/${other.id}/reconcile`));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('drift_needs_terraform');
    expect((await runner.post(p('/templates/999999/reconcile'))).statusCode).toBe(404);
  });
});
