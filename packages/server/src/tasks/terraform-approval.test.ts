import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  gitRepo,
  insertInventory,
  insertRepository,
  insertTemplate,
  outputOf,
  toolsOnPath,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { harnessWithProject, insertSecretEnvironment } from '../../test/support/task-runs';
import { everyActionPlan, terraformScript } from '../../test/support/terraform-stand-in';
import { planChangedMessage } from './executors/terraform';

/**
 * The approved plan is the applied plan: a confirmation binds to the plan file's digest, a plan-only task's stored
 * plan is applied exactly by a later task, and a stale, expired, altered or self-approved plan is refused.
 */
describe.each(testDialects())('Terraform plan approval on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let runner: Client;
  let guest: Client;
  let projectId: number;
  let repoId: number;
  let envId: number;
  let invId: number;
  let record: string;
  let restorePath = () => {};
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    ({ record, restore: restorePath } = toolsOnPath({ terraform: terraformScript, tofu: terraformScript }));
    let members: Record<string, Client>;
    ({ h, owner, projectId, members } = await harnessWithProject(dialect));
    runner = members.task_runner as Client;
    guest = members.guest as Client;
    const repo = gitRepo({
      'change/main.tf': 'resource "null_resource" "example" {}\n',
      'everything/main.tf': '# every kind of change\n',
      'everything/plan.json': JSON.stringify(everyActionPlan),
    });
    repoId = await insertRepository(h.deps, projectId, { git_url: `file://${repo}` });
    envId = await insertSecretEnvironment(h.deps, projectId, { json: { region: 'eu-1' } }, { vars: {} });
    invId = await insertInventory(h.deps, projectId, { type: 'terraform-workspace', inventory: 'staging' });
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  const mark = () => readFileSync(record, 'utf8').split('\n').filter(Boolean).length;
  const commandsSince = (m: number) =>
    readFileSync(record, 'utf8')
      .split('\n')
      .slice(m)
      .filter(Boolean)
      .map((l) => l.replace(/\/\S*\/signalbox\.tfplan/g, '<plan>'));
  /** The digests of the plan files the stand-in applied, in order. */
  const applied = () =>
    existsSync(`${record}.tfstate.applied`)
      ? readFileSync(`${record}.tfstate.applied`, 'utf8').split('\n').filter(Boolean)
      : [];

  async function template(params: Record<string, unknown> = {}, playbook = 'change') {
    return insertTemplate(h.deps, projectId, {
      app: 'terraform',
      playbook,
      repository_id: repoId,
      environment_id: envId,
      inventory_id: invId,
      allow_parallel_tasks: 1,
      task_params: params,
    });
  }
  async function start(templateId: number, body: Record<string, unknown> = {}, as = owner) {
    const res = await as.post(p('/tasks'), { template_id: templateId, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }
  async function done(id: number) {
    const t = await waitForStatus(h.deps, id, ['success', 'error', 'stopped']);
    return { ...t, log: (await outputOf(h.deps, id)).join('\n') };
  }
  /** A plan-only task of the template that succeeded; its plan's digest. */
  async function planOnly(templateId: number, as = owner) {
    const id = await start(templateId, { params: { plan: true } }, as);
    const end = await done(id);
    expect(end.status, end.log).toBe('success');
    const plan = (await owner.get(p(`/tasks/${id}/plan`))).json();
    return { id, digest: plan.plan_file.digest as string, plan };
  }
  const events = async (kind: string) =>
    (
      (await owner.get(p('/events?limit=200'))).json() as { kind: string; params: Record<string, unknown> }[]
    ).filter((e) => e.kind === kind);

  it('a confirmation names the digest it read: another digest is refused, the right one applies', async () => {
    const tpl = await template();
    const id = await start(tpl);
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const plan = (await owner.get(p(`/tasks/${id}/plan`))).json();
    const digest = plan.plan_file.digest as string;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(plan.plan_file.commit_hash).toMatch(/^[0-9a-f]{40}$/);

    const wrong = await runner.post(p(`/tasks/${id}/confirm`), { plan_digest: 'a'.repeat(64) });
    expect(wrong.statusCode).toBe(409);
    expect(wrong.json().code).toBe('plan_digest_mismatch');
    for (const plan_digest of ['xyz', 'A'.repeat(64), 7, ['a']]) {
      const bad = await runner.post(p(`/tasks/${id}/confirm`), { plan_digest });
      expect(bad.statusCode, JSON.stringify(plan_digest)).toBe(400);
      expect(bad.json().code).toBeTruthy();
    }
    expect((await guest.post(p(`/tasks/${id}/confirm`), { plan_digest: digest })).statusCode).toBe(403);
    expect(
      (await h.deps.db.selectFrom('task').select('status').where('id', '=', id).executeTakeFirst())?.status,
    ).toBe('waiting_confirmation');

    const m = mark();
    expect((await runner.post(p(`/tasks/${id}/confirm`), { plan_digest: digest })).statusCode).toBe(204);
    const end = await done(id);
    expect(end.status, end.log).toBe('success');
    expect(commandsSince(m)).toEqual(['terraform apply -lock-timeout=5m -auto-approve <plan>']);
    expect(applied().at(-1)).toBe(digest);
    const after = (await owner.get(p(`/tasks/${id}/plan`))).json().plan_file;
    expect(after).toMatchObject({ approved_by: runner.userId, approved_by_name: expect.any(String) });
    expect(after.approved_at).toBeTruthy();
    const approvals = await events('task.plan_approved');
    expect(approvals.find((e) => e.params.task_id === id)?.params).toMatchObject({ task_id: id, digest });
  });

  it('a plan file changed after it was shown is not applied: the task fails saying so', async () => {
    const tpl = await template();
    const id = await start(tpl);
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const planFile = join(h.dataDir, 'tasks', String(id), 'tmp', 'signalbox.tfplan');
    writeFileSync(planFile, JSON.stringify({ ...everyActionPlan, format_version: '1.2' }));
    const before = applied().length;
    expect((await owner.post(p(`/tasks/${id}/confirm`), {})).statusCode).toBe(204);
    const end = await done(id);
    expect(end.status).toBe('error');
    expect(end.message).toBe(planChangedMessage);
    expect(end.log).toContain(planChangedMessage);
    expect(applied().length).toBe(before);
  });

  it('a rejection is an audit event with the plan digest', async () => {
    const tpl = await template();
    const id = await start(tpl);
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const digest = (await owner.get(p(`/tasks/${id}/plan`))).json().plan_file.digest;
    expect((await runner.post(p(`/tasks/${id}/reject`), {})).statusCode).toBe(204);
    expect((await done(id)).status).toBe('error');
    const rejected = await events('task.plan_rejected');
    expect(rejected.find((e) => e.params.task_id === id)?.params).toMatchObject({ task_id: id, digest });
  });

  it('refuses the starter as approver when the template says so; another member approves', async () => {
    const tpl = await template({ approver_must_differ: true });
    const id = await start(tpl, {}, runner);
    await waitForStatus(h.deps, id, ['waiting_confirmation']);
    const own = await runner.post(p(`/tasks/${id}/confirm`), {});
    expect(own.statusCode).toBe(403);
    expect(own.json()).toMatchObject({
      code: 'own_plan_approval',
      error: 'This template requires someone other than who started the run to approve its plan',
    });
    expect((await owner.post(p(`/tasks/${id}/confirm`), {})).statusCode).toBe(204);
    expect((await done(id)).status).toBe('success');

    // A stored plan too: its starter may not apply it, another member may.
    const stored = await planOnly(tpl, runner);
    const refused = await runner.post(p(`/tasks/${stored.id}/apply_plan`), {});
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe('own_plan_approval');
    const ok = await owner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: stored.digest });
    expect(ok.statusCode, ok.body).toBe(201);
    expect((await done(ok.json().id)).status).toBe('success');
  });

  it('a later task applies exactly the stored plan of a plan-only task, once', async () => {
    const tpl = await template({}, 'everything');
    const stored = await planOnly(tpl);
    expect(stored.plan.plan_file).toMatchObject({
      stored: true,
      workspace: 'staging',
      applied_by_task: null,
    });
    const made = Date.parse(stored.plan.plan_file.created);
    expect(Date.parse(stored.plan.plan_file.expires_at) - made).toBe(24 * 3_600_000);
    // Kept sealed: the stored column is not the plan's JSON.
    const row = await h.deps.db
      .selectFrom('task_plan')
      .select('plan_file')
      .where('task_id', '=', stored.id)
      .executeTakeFirstOrThrow();
    expect(row.plan_file).toBeTruthy();
    expect(row.plan_file).not.toContain('aws_instance');
    expect(Buffer.from(row.plan_file as string, 'base64').toString('latin1')).not.toContain('aws_instance');

    const m = mark();
    const res = await runner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: stored.digest });
    expect(res.statusCode, res.body).toBe(201);
    const applyTask = res.json();
    expect(applyTask).toMatchObject({ template_id: tpl, user_id: runner.userId });
    const end = await done(applyTask.id);
    expect(end.status, end.log).toBe('success');
    // No plan is made: the stored one is applied, the very file (its SHA-256) that was planned.
    expect(commandsSince(m)).toEqual([
      'terraform init -lock-timeout=5m -migrate-state',
      'terraform workspace list',
      'terraform workspace select -or-create=true staging',
      'terraform apply -lock-timeout=5m -auto-approve <plan>',
    ]);
    expect(applied().at(-1)).toBe(stored.digest);
    expect(end.log).toContain(`Applying the plan of task ${stored.id} (SHA-256 ${stored.digest})`);
    const task = await h.deps.db
      .selectFrom('task')
      .selectAll()
      .where('id', '=', applyTask.id)
      .executeTakeFirstOrThrow();
    expect(task.plan_of).toBe(stored.id);
    expect(task.commit_hash).toBe(stored.plan.plan_file.commit_hash);
    // The apply task shows the plan it applied; the plan task says who approved it and which task applied it.
    const shown = (await owner.get(p(`/tasks/${applyTask.id}/plan`))).json();
    expect(shown.counts).toEqual(stored.plan.counts);
    expect(shown.plan_file).toMatchObject({ digest: stored.digest, stored: false });
    const source = (await owner.get(p(`/tasks/${stored.id}/plan`))).json().plan_file;
    expect(source).toMatchObject({
      approved_by: runner.userId,
      applied_by_task: applyTask.id,
      stored: false,
    });
    // Applied, the stored file is gone: it is never applied again.
    const kept = await h.deps.db
      .selectFrom('task_plan')
      .select('plan_file')
      .where('task_id', '=', stored.id)
      .executeTakeFirstOrThrow();
    expect(kept.plan_file).toBeNull();
    const ev = (await events('task.plan_applied')).find((e) => e.params.task_id === stored.id);
    expect(ev?.params).toMatchObject({
      task_id: stored.id,
      apply_task_id: applyTask.id,
      digest: stored.digest,
    });

    const again = await runner.post(p(`/tasks/${stored.id}/apply_plan`), {});
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({
      code: 'plan_already_applied',
      params: { id: stored.id, by: applyTask.id },
    });
  });

  it('of two applies of one plan requested at once, exactly one makes a task', async () => {
    const tpl = await template({}, 'everything');
    const stored = await planOnly(tpl);
    const before = await h.deps.db.selectFrom('task').select('id').where('plan_of', '=', stored.id).execute();
    expect(before).toEqual([]);
    const answers = await Promise.all([
      runner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: stored.digest }),
      owner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: stored.digest }),
      runner.post(p(`/tasks/${stored.id}/apply_plan`), {}),
    ]);
    const made = answers.filter((a) => a.statusCode === 201).map((a) => a.json().id as number);
    expect(made, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    for (const refused of answers.filter((a) => a.statusCode !== 201)) {
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json()).toMatchObject({ code: 'plan_already_applied', params: { id: stored.id } });
    }
    const appliers = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('plan_of', '=', stored.id)
      .execute();
    expect(appliers.map((t) => t.id)).toEqual(made);
    expect((await done(made[0] as number)).status).toBe('success');
  });

  it('refuses a plan older than the latest apply on its workspace', async () => {
    const tpl = await template();
    const older = await planOnly(tpl);
    const newer = await start(tpl);
    await waitForStatus(h.deps, newer, ['waiting_confirmation']);
    expect((await owner.post(p(`/tasks/${newer}/confirm`), {})).statusCode).toBe(204);
    expect((await done(newer)).status).toBe('success');
    const before = applied().length;
    const res = await runner.post(p(`/tasks/${older.id}/apply_plan`), {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'plan_stale',
      params: { id: older.id, workspace: 'staging', applied: newer },
      error: `The plan of task ${older.id} is older than the last apply on workspace staging (task ${newer}): plan again`,
    });
    expect(applied().length).toBe(before);
    // A plan made after that apply is applicable.
    const fresh = await planOnly(tpl);
    const ok = await runner.post(p(`/tasks/${fresh.id}/apply_plan`), {});
    expect(ok.statusCode, ok.body).toBe(201);
    expect((await done(ok.json().id)).status).toBe('success');
  });

  it('refuses an expired plan (the template keeps plans plan_ttl_hours)', async () => {
    const tpl = await template({ plan_ttl_hours: 2 });
    const stored = await planOnly(tpl);
    expect(Date.parse(stored.plan.plan_file.expires_at) - Date.parse(stored.plan.plan_file.created)).toBe(
      2 * 3_600_000,
    );
    const made = new Date(Date.now() - 3 * 3_600_000).toISOString();
    await h.deps.db
      .updateTable('task_plan')
      .set({ created: made })
      .where('task_id', '=', stored.id)
      .execute();
    const res = await runner.post(p(`/tasks/${stored.id}/apply_plan`), {});
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      code: 'plan_expired',
      params: { id: stored.id, hours: 2, at: new Date(Date.parse(made) + 2 * 3_600_000).toISOString() },
    });
  });

  it('refuses a stored plan whose file no longer matches its digest, or not the digest the approver read', async () => {
    const tpl = await template();
    const stored = await planOnly(tpl);
    const read = await runner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: 'b'.repeat(64) });
    expect(read.statusCode).toBe(409);
    expect(read.json().code).toBe('plan_digest_mismatch');
    const other = Buffer.from('{"format_version":"1.2","resource_changes":[]}').toString('base64');
    await h.deps.db
      .updateTable('task_plan')
      .set({ plan_file: h.deps.box.seal(other) })
      .where('task_id', '=', stored.id)
      .execute();
    const altered = await runner.post(p(`/tasks/${stored.id}/apply_plan`), {});
    expect(altered.statusCode).toBe(409);
    expect(altered.json().code).toBe('plan_digest_mismatch');
    expect(createHash('sha256').update(Buffer.from(other, 'base64')).digest('hex')).not.toBe(stored.digest);
  });

  it('answers hostile apply requests with a code: no stored plan, unknown or foreign task, bad body', async () => {
    const tpl = await template();
    const normal = await start(tpl);
    await waitForStatus(h.deps, normal, ['waiting_confirmation']);
    const notStored = await runner.post(p(`/tasks/${normal}/apply_plan`), {});
    expect(notStored.statusCode).toBe(409);
    expect(notStored.json()).toMatchObject({ code: 'plan_not_stored', params: { id: normal } });
    expect((await owner.post(p(`/tasks/${normal}/reject`), {})).statusCode).toBe(204);
    await done(normal);
    expect((await runner.post(p('/tasks/999999/apply_plan'), {})).statusCode).toBe(404);
    expect((await runner.post(p('/tasks/abc/apply_plan'), {})).statusCode).toBe(400);
    const stored = await planOnly(tpl);
    expect((await guest.post(p(`/tasks/${stored.id}/apply_plan`), {})).statusCode).toBe(403);
    const bad = await runner.post(p(`/tasks/${stored.id}/apply_plan`), { plan_digest: 'nope', extra: 1 });
    expect(bad.statusCode).toBe(400);
    const other = await h.userClient({ can_create_project: true });
    const foreign = await other.post(p(`/tasks/${stored.id}/apply_plan`), {});
    expect(foreign.statusCode).toBe(403);
    // Another project's route never reaches this task.
    const { projectId: otherProject } = await h.projectWithTeam(other);
    const cross = await other.post(`/api/project/${otherProject}/tasks/${stored.id}/apply_plan`, {});
    expect(cross.statusCode).toBe(404);
  });
});
