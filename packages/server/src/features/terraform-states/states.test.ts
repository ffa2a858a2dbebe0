import type { ProjectRole } from '@signalbox/contracts';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { insertTemplate, taskRow } from '../../../test/support/task-fixtures';
import { insertReturningId } from '../../db/values';
import { issueTaskCredential } from '../../tasks/state-credentials.store';

/** A Terraform state (format 4) with the given serial and resources. */
function stateDoc(serial: number, resources: unknown[] = [], lineage = 'lin-1') {
  return JSON.stringify({ version: 4, terraform_version: '1.9.5', serial, lineage, outputs: {}, resources });
}
const resource = (name: string, attributes: Record<string, unknown>, sensitive: unknown[] = []) => ({
  mode: 'managed',
  type: 'null_resource',
  name,
  provider: 'provider["registry.terraform.io/hashicorp/null"]',
  instances: [{ schema_version: 0, attributes, sensitive_attributes: sensitive }],
});
const lockInfo = (id: string, who = 'alice@laptop') =>
  JSON.stringify({
    ID: id,
    Operation: 'OperationTypeApply',
    Info: '',
    Who: who,
    Version: '1.9.5',
    Created: '2026-11-29T10:00:00Z',
    Path: '',
  });
const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe.each(testDialects())('built-in Terraform state backend on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let otherProjectId: number;
  let members: Record<ProjectRole, Client>;
  const url = (name: string, project = projectId) => `/api/project/${project}/terraform/states/${name}`;

  /** A call of Terraform's protocol with an Authorization header (basic or bearer). */
  const call = (method: string, path: string, authorization: string, payload?: string) =>
    h.app.inject({
      method: method as InjectOptions['method'],
      url: path,
      headers: { authorization, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(payload !== undefined ? { payload } : {}),
    });

  async function tokenOf(client: Client, body: Record<string, unknown> = {}) {
    const res = await client.post('/api/user/tokens', body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().token as string;
  }

  /** A task of the project in `status`, with state backend credentials of its run. */
  async function runningTask(project: number, status = 'running') {
    const templateId = await insertTemplate(h.deps, project, { app: 'terraform' });
    const id = await insertReturningId(
      h.deps.db,
      h.deps.dialect,
      'task',
      taskRow(project, templateId, { status }),
    );
    const cred = await issueTaskCredential(h.deps.db, { id, project_id: project });
    return { id, auth: basic(cred.username, cred.password) };
  }

  beforeAll(async () => {
    h = await createHarness(dialect, { terraformStateMaxMb: 1, terraformStateVersions: 3 });
    owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    otherProjectId = (await h.projectWithTeam(owner, 'Other project')).projectId;
  });
  afterAll(async () => h?.close());

  it('speaks the http backend protocol: no state, lock, write with the lock ID, read, unlock', async () => {
    const token = basic('alice', await tokenOf(members.task_runner));
    // No state yet: 404 with its code, which Terraform's http backend reads as "no state".
    const none = await call('GET', url('net'), token);
    expect({ status: none.statusCode, code: none.json().code }).toEqual({ status: 404, code: 'not_found' });

    const locked = await call('LOCK', url('net'), token, lockInfo('lock-1'));
    expect(locked.statusCode, locked.body).toBe(200);
    // Retrying the same lock is granted; another one is a conflict naming the holder as Terraform reads it.
    expect((await call('LOCK', url('net'), token, lockInfo('lock-1'))).statusCode).toBe(200);
    const conflict = await call('LOCK', url('net'), token, lockInfo('lock-2', 'bob@ci'));
    expect(conflict.statusCode).toBe(423);
    expect(conflict.json()).toMatchObject({
      code: 'state_locked',
      ID: 'lock-1',
      Who: 'alice@laptop',
      Operation: 'OperationTypeApply',
      params: { name: 'net', who: 'alice@laptop', id: 'lock-1' },
    });

    const body = stateDoc(1, [resource('a', { id: '1', triggers: { v: 'one' } })]);
    // Without the lock's ID, or with another one, a locked state takes no write.
    expect((await call('POST', url('net'), token, body)).statusCode).toBe(423);
    const wrong = await call('POST', `${url('net')}?ID=lock-2`, token, body);
    expect(wrong.statusCode).toBe(423);
    expect(wrong.json().ID).toBe('lock-1');
    const written = await call('POST', `${url('net')}?ID=lock-1`, token, body);
    expect(written.statusCode, written.body).toBe(200);

    const read = await call('GET', url('net'), token);
    expect(read.statusCode).toBe(200);
    expect(read.body).toBe(body);
    expect(read.headers['content-md5']).toBeTruthy();

    // Unlock by ID: another ID is refused with the holder's info; the right one frees it.
    const badUnlock = await call('UNLOCK', url('net'), token, lockInfo('lock-2'));
    expect(badUnlock.statusCode).toBe(423);
    expect(badUnlock.json().ID).toBe('lock-1');
    expect((await call('UNLOCK', url('net'), token, lockInfo('lock-1'))).statusCode).toBe(200);
    // Unlocked, it takes writes without an ID, and a write naming a lock it no longer has is refused.
    expect((await call('POST', url('net'), token, stateDoc(2))).statusCode).toBe(200);
    const lost = await call('POST', `${url('net')}?ID=lock-1`, token, stateDoc(3));
    expect(lost.statusCode).toBe(409);
    expect(lost.json().code).toBe('state_lock_lost');
    expect((await call('LOCK', url('net'), token, lockInfo('lock-3'))).statusCode).toBe(200);
    expect((await call('UNLOCK', `${url('net')}?ID=lock-3`, token)).statusCode).toBe(200);
  });

  it('grants one lock of many asked at once, and takes first writes of a new state at once', async () => {
    const token = basic('x', await tokenOf(owner));
    const locks = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call('LOCK', url('race'), token, lockInfo(`race-${i}`))),
    );
    expect(locks.map((r) => r.statusCode).sort()).toEqual([200, 423, 423, 423, 423, 423]);
    const winner = locks.findIndex((r) => r.statusCode === 200);
    for (const r of locks.filter((l) => l.statusCode === 423)) expect(r.json().ID).toBe(`race-${winner}`);
    const writes = await Promise.all(
      [1, 2, 3].map((serial) => call('POST', url(`fresh-${serial % 2}`), token, stateDoc(serial))),
    );
    expect(writes.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const fresh = (await owner.get(`/api/project/${projectId}/terraform/states`)).json();
    expect(fresh.filter((s: { name: string }) => s.name.startsWith('fresh-')).length).toBe(2);
  });

  it('refuses what is not a state or a lock, and states over the size limit with 413', async () => {
    const token = basic('x', await tokenOf(owner));
    for (const bad of [
      'not json',
      '[1]',
      '{"serial":"1","lineage":"x"}',
      '{"serial":1}',
      '{"serial":-1,"lineage":""}',
    ]) {
      const res = await call('POST', url('bad'), token, bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('state_invalid');
    }
    for (const bad of ['', '{}', '{"ID":""}', '{"ID":5}', 'nope', `{"ID":"${'x'.repeat(201)}"}`]) {
      const res = await call('LOCK', url('bad'), token, bad);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('state_lock_info_invalid');
    }
    const big = stateDoc(1, [resource('big', { blob: 'x'.repeat(1_100_000) })]);
    const tooLarge = await call('POST', url('bad'), token, big);
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toMatchObject({ code: 'state_too_large', params: { max: '1 MiB' } });
    for (const name of ['-x', '.hidden', 'a/b', 'ä', 'a b']) {
      const res = await call('GET', url(encodeURIComponent(name)), token);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().code).toBe('state_name');
    }
    expect((await call('GET', url('x'.repeat(101)), token)).json().code).toBe('path_param_too_long');
    expect((await call('GET', url('bad'), token)).statusCode).toBe(404);
  });

  it('keeps versions with their writer, diffs them with sensitive values hidden, and rolls back (managers)', async () => {
    const task = await runningTask(projectId);
    const v1 = stateDoc(1, [
      resource('db', { id: 'd1', password: 'hunter2-old', size: 'small' }, [
        [{ type: 'get_attr', value: 'password' }],
      ]),
      resource('gone', { id: 'g' }),
    ]);
    const v2 = stateDoc(2, [
      resource('db', { id: 'd1', password: 'hunter2-new', size: 'large' }, [
        [{ type: 'get_attr', value: 'password' }],
      ]),
      resource('fresh', { id: 'f', tags: { env: 'prod' } }),
    ]);
    expect((await call('POST', url('app'), task.auth, v1)).statusCode).toBe(200);
    expect((await call('POST', url('app'), task.auth, v2)).statusCode).toBe(200);

    const detail = await members.guest.get(`${url('app')}/versions`);
    expect(detail.statusCode, detail.body).toBe(200);
    const { state, versions } = detail.json();
    expect(state).toMatchObject({
      name: 'app',
      serial: 2,
      lineage: 'lin-1',
      task_id: task.id,
      versions: 2,
      lock: null,
    });
    expect(versions.map((v: { serial: number }) => v.serial)).toEqual([2, 1]);
    expect(versions[0]).toMatchObject({ task_id: task.id, source: 'write', current: true });
    const [newer, older] = versions as { id: number }[];

    const diff = await members.task_runner.get(`${url('app')}/diff?from=${older!.id}&to=${newer!.id}`);
    expect(diff.statusCode, diff.body).toBe(200);
    expect(diff.json()).toMatchObject({
      added: ['null_resource.fresh'],
      removed: ['null_resource.gone'],
      changed: [
        {
          address: 'null_resource.db',
          attributes: [
            { path: 'password', before: null, after: null, sensitive: true },
            { path: 'size', before: '"small"', after: '"large"', sensitive: false },
          ],
        },
      ],
      truncated: false,
    });
    expect(diff.body).not.toContain('hunter2');
    // A diff shows values: guests, who may not read states, may not see it either.
    expect((await members.guest.get(`${url('app')}/diff?from=${older!.id}&to=${newer!.id}`)).statusCode).toBe(
      403,
    );
    expect((await owner.get(`${url('app')}/diff?from=${older!.id}&to=${older!.id}`)).json().code).toBe(
      'state_diff_same',
    );
    expect((await owner.get(`${url('app')}/diff?from=${older!.id}&to=999999`)).statusCode).toBe(404);

    // Rollback: managers only; the old state comes back as the newest version with the next serial.
    const rollback = `${url('app')}/versions/${older!.id}/rollback`;
    expect((await members.task_runner.post(rollback)).statusCode).toBe(403);
    expect((await members.manager.post(`${url('app')}/versions/${newer!.id}/rollback`)).json().code).toBe(
      'state_rollback_current',
    );
    const rolled = await members.manager.post(rollback);
    expect(rolled.statusCode, rolled.body).toBe(204);
    const after = (await owner.get(`${url('app')}/versions`)).json();
    expect(after.versions[0]).toMatchObject({
      serial: 3,
      source: 'rollback',
      rolled_back_from: older!.id,
      user_id: members.manager.userId,
      current: true,
    });
    const current = JSON.parse((await call('GET', url('app'), task.auth)).body);
    expect(current.serial).toBe(3);
    expect(current.resources.map((r: { name: string }) => r.name)).toEqual(['db', 'gone']);
    const events = (await owner.get(`/api/project/${projectId}/events?object_type=terraform_state`)).json();
    expect(events[0]).toMatchObject({
      kind: 'terraform_state.rolled_back',
      params: { name: 'app', version: older!.id },
    });

    // Retention: 3 versions kept, the newest.
    for (const serial of [4, 5])
      expect((await call('POST', url('app'), task.auth, stateDoc(serial))).statusCode).toBe(200);
    const kept = (await owner.get(`${url('app')}/versions`)).json().versions;
    expect(kept.map((v: { serial: number }) => v.serial)).toEqual([5, 4, 3]);
  });

  it('stores states sealed at rest, never in plain text', async () => {
    const token = basic('x', await tokenOf(owner));
    const secret = 'pl41n-t3xt-n3v3r';
    expect(
      (await call('POST', url('sealed'), token, stateDoc(1, [resource('s', { value: secret })]))).statusCode,
    ).toBe(200);
    const rows = await h.deps.db.selectFrom('terraform_state_version').select('secret').execute();
    for (const row of rows) expect(row.secret).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(Buffer.from(secret).toString('base64').slice(0, 12));
  });

  it('shows the lock on the list and lets managers force-unlock, audited', async () => {
    const task = await runningTask(projectId);
    expect((await call('LOCK', url('locked'), task.auth, lockInfo('L-1', 'runner@ci'))).statusCode).toBe(200);
    const list = await members.guest.get(`/api/project/${projectId}/terraform/states`);
    expect(list.statusCode).toBe(200);
    const entry = list.json().find((s: { name: string }) => s.name === 'locked');
    expect(entry).toMatchObject({
      size: 0,
      serial: null,
      versions: 0,
      lock: { id: 'L-1', who: 'runner@ci', operation: 'OperationTypeApply', task_id: task.id },
    });
    expect(entry.lock.locked_at).toMatch(/^\d{4}-/);

    expect((await members.task_runner.del(`${url('locked')}/lock`)).statusCode).toBe(403);
    expect((await members.guest.del(`${url('locked')}/lock`)).statusCode).toBe(403);
    expect((await members.manager.del(`${url('locked')}/lock`)).statusCode).toBe(204);
    const again = (await owner.get(`/api/project/${projectId}/terraform/states`)).json();
    expect(again.find((s: { name: string }) => s.name === 'locked').lock).toBeNull();
    const events = (await owner.get(`/api/project/${projectId}/events?object_type=terraform_state`)).json();
    expect(events[0]).toMatchObject({
      kind: 'terraform_state.force_unlocked',
      params: { name: 'locked', lock: 'L-1', who: 'runner@ci' },
      user_id: members.manager.userId,
    });
    // `terraform force-unlock` from a laptop: UNLOCK with no lock info, a manager's only.
    expect((await call('LOCK', url('locked'), task.auth, lockInfo('L-2', 'runner@ci'))).statusCode).toBe(200);
    const runnerToken = basic('r', await tokenOf(members.task_runner));
    const notAllowed = await call('UNLOCK', url('locked'), runnerToken);
    expect(notAllowed.statusCode).toBe(403);
    expect(notAllowed.json().params).toEqual({ permission: 'manageProjectResources' });
    expect((await call('UNLOCK', url('locked'), task.auth)).statusCode).toBe(400);
    expect((await call('UNLOCK', url('locked'), basic('m', await tokenOf(members.manager)))).statusCode).toBe(
      200,
    );
    const forced = (await owner.get(`/api/project/${projectId}/events?object_type=terraform_state`)).json();
    expect(forced[0]).toMatchObject({ kind: 'terraform_state.force_unlocked', params: { lock: 'L-2' } });
    // The run that held it finds its lock gone: its write is refused rather than racing another run.
    expect((await call('POST', `${url('locked')}?ID=L-2`, task.auth, stateDoc(1))).statusCode).toBe(409);
  });

  it('decides by role and token scope: guests read nothing, read tokens read, run tokens write', async () => {
    const guest = basic('g', await tokenOf(members.guest));
    expect((await call('GET', url('roles'), guest)).statusCode).toBe(403);
    expect((await call('LOCK', url('roles'), guest, lockInfo('g'))).statusCode).toBe(403);
    expect((await call('POST', url('roles'), guest, stateDoc(1))).statusCode).toBe(403);

    const read = basic('r', await tokenOf(members.task_runner, { scopes: ['read'] }));
    expect((await call('GET', url('roles'), read)).statusCode).toBe(404);
    const refused = await call('POST', url('roles'), read, stateDoc(1));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'missing_token_scope', params: { scope: 'run' } });
    expect((await call('LOCK', url('roles'), read, lockInfo('r'))).statusCode).toBe(403);

    const run = basic('w', await tokenOf(members.task_runner, { scopes: ['read', 'run'] }));
    expect((await call('POST', url('roles'), run, stateDoc(1))).statusCode).toBe(200);
    // Deleting a state is a manager's, with the write scope.
    expect((await call('DELETE', url('roles'), run)).statusCode).toBe(403);
    const manager = basic('m', await tokenOf(members.manager));
    expect((await call('DELETE', url('roles'), manager)).statusCode).toBe(200);
    expect((await call('GET', url('roles'), run)).statusCode).toBe(404);

    // A bearer token works as well; a wrong password or no auth is 401.
    const bearer = `Bearer ${await tokenOf(owner)}`;
    expect((await call('GET', url('roles'), bearer)).statusCode).toBe(404);
    expect((await call('GET', url('roles'), basic('x', 'not-a-token'))).statusCode).toBe(401);
    expect((await h.anonymous().get(url('roles'))).statusCode).toBe(401);
    // Basic auth reaches only the backend's routes.
    expect((await call('GET', `/api/project/${projectId}/templates`, manager)).statusCode).toBe(401);
  });

  it("keeps projects apart: another project's states are out of reach of a task and of a token", async () => {
    const taskA = await runningTask(projectId);
    expect((await call('POST', url('shared'), taskA.auth, stateDoc(1))).statusCode).toBe(200);
    const taskB = await runningTask(otherProjectId);
    // Task B's credentials on project A's path, and task A's on project B's: no such project for them.
    for (const [auth, project] of [
      [taskB.auth, projectId],
      [taskA.auth, otherProjectId],
    ] as const) {
      for (const method of ['GET', 'POST', 'LOCK', 'UNLOCK', 'DELETE']) {
        const res = await call(
          method,
          url('shared', project),
          auth,
          method === 'GET' || method === 'DELETE' ? undefined : stateDoc(9),
        );
        expect(res.statusCode, `${method} ${project}`).toBe(404);
      }
    }
    // A token limited to project B does not reach A; a user of B only is not a member of A.
    const limited = basic('l', await tokenOf(owner, { project_ids: [otherProjectId] }));
    expect((await call('GET', url('shared'), limited)).statusCode).toBe(404);
    const outsider = await h.userClient();
    const stranger = basic('s', await tokenOf(outsider));
    expect((await call('GET', url('shared'), stranger)).statusCode).toBe(403);
    // A task's credentials reach only the backend: not the project's other routes, nor deleting a state.
    expect((await call('GET', `/api/project/${projectId}/templates`, taskA.auth)).statusCode).toBe(401);
    expect((await call('DELETE', url('shared'), taskA.auth)).statusCode).toBe(403);
    // Project A still holds its state, untouched.
    expect(JSON.parse((await call('GET', url('shared'), taskA.auth)).body).serial).toBe(1);
  });

  it('refuses task credentials once the task has ended, or with a wrong secret', async () => {
    const task = await runningTask(projectId);
    expect((await call('GET', url('ended'), task.auth)).statusCode).toBe(404);
    await h.deps.db.updateTable('task').set({ status: 'success' }).where('id', '=', task.id).execute();
    const ended = await call('GET', url('ended'), task.auth);
    expect(ended.statusCode).toBe(401);
    expect(ended.json().code).toBe('state_credentials_invalid');
    const other = await runningTask(projectId);
    expect((await call('GET', url('ended'), basic(`task-${other.id}`, 'guessed'))).statusCode).toBe(401);
    const waiting = await runningTask(projectId, 'waiting');
    expect((await call('GET', url('ended'), waiting.auth)).statusCode).toBe(401);
  });

  it('carries states sealed in a project backup, and restores them on this server only', async () => {
    const token = basic('x', await tokenOf(owner));
    const secret = 'b4ckup-s3cret';
    const source = (await owner.post('/api/projects', { name: 'Backed-up states' })).json().id as number;
    const doc = stateDoc(7, [resource('kept', { value: secret })], 'lin-backup');
    expect((await call('POST', url('backed-up', source), token, doc)).statusCode).toBe(200);
    const backup = await owner.get(`/api/project/${source}/backup`);
    expect(backup.statusCode).toBe(200);
    expect(backup.body).not.toContain(secret);
    const taken = backup.json() as Record<string, unknown> & { meta: Record<string, unknown> };
    const states = taken.terraform_states as { name: string; serial: number; sealed: string }[];
    expect(states.find((s) => s.name === 'backed-up')).toMatchObject({ serial: 7, lineage: 'lin-backup' });

    const restored = await owner.request('POST', '/api/projects/restore', {
      ...taken,
      meta: { ...taken.meta, name: 'Restored states' },
    });
    expect(restored.statusCode, restored.body).toBe(200);
    const newId = restored.json().id as number;
    const read = await call('GET', url('backed-up', newId), token);
    expect(read.statusCode).toBe(200);
    expect(read.body).toBe(doc);

    // A state sealed under another key (or damaged) stops the restore, naming it; nothing is written.
    const foreign: Record<string, unknown> = { ...taken, meta: { ...taken.meta, name: 'Foreign states' } };
    foreign.terraform_states = [
      { name: 'x', serial: 1, lineage: 'l', sealed: 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRob' },
    ];
    const refused = await owner.request('POST', '/api/projects/restore', foreign);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('backup_invalid');
    expect(refused.json().params.detail).toContain(
      "terraform_states[0]: the state is sealed with another server's secret key",
    );
    const names = (await owner.get('/api/projects')).json().map((p: { name: string }) => p.name);
    expect(names).not.toContain('Foreign states');
  });

  it('removes the states, versions and task credentials of a deleted project', async () => {
    const doomed = (await owner.post('/api/projects', { name: 'Doomed states' })).json().id as number;
    const token = basic('x', await tokenOf(owner));
    expect((await call('POST', url('gone', doomed), token, stateDoc(1))).statusCode).toBe(200);
    expect((await call('LOCK', url('gone', doomed), token, lockInfo('D-1'))).statusCode).toBe(200);
    const task = await runningTask(doomed);
    expect((await owner.del(`/api/project/${doomed}`)).statusCode).toBe(204);
    for (const table of ['terraform_state', 'terraform_state_version', 'task_state_credential'] as const) {
      const rows = await h.deps.db
        .selectFrom(table)
        .select('project_id')
        .where('project_id', '=', doomed)
        .execute();
      expect(rows, table).toEqual([]);
    }
    expect((await call('GET', url('gone', doomed), task.auth)).statusCode).toBe(401);
  });
});
