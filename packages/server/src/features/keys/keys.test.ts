import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, resourceMatrixTests, type Team } from '../../../test/support/permission-matrix';
import {
  expectCreated,
  expectDeleteRefused,
  expectForeignNotFound,
  expectRejected,
  expectSortedByName,
  lastEvents,
  MEGABYTE,
  malformedBodies,
  noRefs,
  snapshot,
} from '../../../test/support/resource-team';
import { getDecryptedKey } from './keys.service';

describe.each(testDialects())('keys on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Keys');
    other = await createTeam(h, 'Other');
  });
  afterAll(async () => h?.close());

  const loginPassword = (name: string, password = 'pw-1') => ({
    name,
    type: 'login_password',
    login_password: { login: 'deploy', password },
  });
  const createKey = async (body: object = loginPassword(`k-${Math.random()}`), t = team) => {
    const res = await t.owner.post(`${t.base}/keys`, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string };
  };

  it('creates keys of every type and answers without the secret', async () => {
    const url = `${team.base}/keys`;
    await expectCreated(team.owner, url, loginPassword('Deploy login', 'hunter2-lp'), {
      name: 'Deploy login',
      type: 'login_password',
      project_id: team.projectId,
      login_password: { login: 'deploy' },
      has_secret: true,
    });
    const ssh = await expectCreated(
      team.manager,
      url,
      {
        name: 'Deploy ssh',
        type: 'ssh',
        project_id: team.projectId,
        ssh: { login: 'git', passphrase: 'pass-phrase-1', private_key: '-----BEGIN KEY-----\nabc\n' },
      },
      {
        name: 'Deploy ssh',
        type: 'ssh',
        project_id: team.projectId,
        ssh: { login: 'git' },
        has_secret: true,
      },
    );
    const none = await expectCreated(
      team.admin,
      url,
      { name: 'Nothing', type: 'none' },
      { name: 'Nothing', type: 'none', project_id: team.projectId, has_secret: false },
    );

    const decrypted = await getDecryptedKey(h.deps, team.projectId, ssh.id);
    expect(decrypted).toEqual({
      id: ssh.id,
      name: 'Deploy ssh',
      type: 'ssh',
      login: 'git',
      password: '',
      passphrase: 'pass-phrase-1',
      private_key: '-----BEGIN KEY-----\nabc\n',
    });
    expect(await lastEvents(h, team.projectId, 1)).toEqual([
      { object_type: 'key', object_id: none.id, description: 'Access key Nothing created' },
    ]);
  });

  it('lists only key-store keys, sorted by name', async () => {
    const t = await createTeam(h, 'Sorted');
    for (const name of ['beta', 'Alpha', 'gamma']) await createKey(loginPassword(name), t);
    const env = await h.deps.db
      .selectFrom('environment')
      .select('id')
      .where('project_id', '=', t.projectId)
      .executeTakeFirstOrThrow();
    for (const owner of ['variable', 'environment']) {
      await h.deps.db
        .insertInto('access_key')
        .values({
          project_id: t.projectId,
          name: `aaa-${owner}`,
          type: 'string',
          secret: h.deps.box.seal('x'),
          owner,
          environment_id: env.id,
        })
        .execute();
    }
    await expectSortedByName(t.guest, `${t.base}/keys`, ['Alpha', 'beta', 'gamma', 'None']);
    const byType = await t.guest.get(`${t.base}/keys?sort=type&order=asc`);
    expect(byType.json().map((k: { type: string }) => k.type)).toEqual([
      'login_password',
      'login_password',
      'login_password',
      'none',
    ]);
    const bogus = await t.guest.get(`${t.base}/keys?sort=secret&order=sideways`);
    expect(bogus.statusCode).toBe(200);
    expect(bogus.json()).toHaveLength(4);
    const secretRow = await h.deps.db
      .selectFrom('access_key')
      .select('id')
      .where('project_id', '=', t.projectId)
      .where('owner', '=', 'variable')
      .executeTakeFirstOrThrow();
    expect((await t.owner.get(`${t.base}/keys/${secretRow.id}`)).statusCode).toBe(404);
    expect(
      (await t.owner.put(`${t.base}/keys/${secretRow.id}`, { name: 'x', type: 'none' })).statusCode,
    ).toBe(404);
    expect((await t.owner.del(`${t.base}/keys/${secretRow.id}`)).statusCode).toBe(404);
  });

  it('gets one key', async () => {
    const key = await createKey(loginPassword('One'));
    const res = await team.guest.get(`${team.base}/keys/${key.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: key.id, name: 'One', login_password: { login: 'deploy' } });
    expect((await team.guest.get(`${team.base}/keys/999999`)).json()).toMatchObject({
      error: 'Access key not found',
    });
    expect((await team.guest.get(`${team.base}/keys/abc`)).statusCode).toBe(400);
  });

  it('says whether a key has its secret, never the secret', async () => {
    const withSecret = await createKey(loginPassword('Has secret', 'has-secret-pw'));
    const none = await createKey({ name: 'Has none', type: 'none' });
    // A key restored from a backup: its type and an empty secret (a backup carries no secrets).
    const restored = await createKey(loginPassword('Restored'));
    await h.deps.db
      .updateTable('access_key')
      .set({ secret: h.deps.box.seal(JSON.stringify({ login: '', password: '' })) })
      .where('id', '=', restored.id)
      .execute();
    const get = async (id: number) => (await team.guest.get(`${team.base}/keys/${id}`)).json();
    expect(await get(withSecret.id)).toMatchObject({ has_secret: true });
    expect(await get(none.id)).toMatchObject({ has_secret: false });
    expect(await get(restored.id)).toMatchObject({ has_secret: false });
    const list = (await team.guest.get(`${team.base}/keys`)).json() as { id: number; has_secret: boolean }[];
    expect(list.find((k) => k.id === restored.id)?.has_secret).toBe(false);
    expect(JSON.stringify(list)).not.toContain('has-secret-pw');
    // Entering one makes it a key with a secret.
    const put = await team.owner.put(`${team.base}/keys/${restored.id}`, {
      ...loginPassword('Restored', 'entered-pw'),
      override_secret: true,
    });
    expect(put.statusCode).toBe(204);
    expect(await get(restored.id)).toMatchObject({ has_secret: true });
  });

  it('keeps the stored secret unless override_secret is set', async () => {
    const key = await createKey(loginPassword('Keep', 'original-pw'));
    const url = `${team.base}/keys/${key.id}`;
    const plain = await team.owner.put(url, { id: key.id, name: 'Kept', type: 'login_password' });
    expect(plain.statusCode).toBe(204);
    let stored = await getDecryptedKey(h.deps, team.projectId, key.id);
    expect(stored).toMatchObject({ name: 'Kept', login: 'deploy', password: 'original-pw' });

    const ignored = await team.owner.put(url, {
      name: 'Kept',
      type: 'login_password',
      login_password: { login: 'other', password: 'ignored-pw' },
    });
    expect(ignored.statusCode).toBe(204);
    stored = await getDecryptedKey(h.deps, team.projectId, key.id);
    expect(stored).toMatchObject({ login: 'deploy', password: 'original-pw' });

    const override = await team.owner.put(url, {
      name: 'Kept',
      type: 'login_password',
      override_secret: true,
      login_password: { login: 'root', password: 'new-pw' },
    });
    expect(override.statusCode).toBe(204);
    stored = await getDecryptedKey(h.deps, team.projectId, key.id);
    expect(stored).toMatchObject({ login: 'root', password: 'new-pw' });
    expect(await lastEvents(h, team.projectId, 1)).toEqual([
      { object_type: 'key', object_id: key.id, description: 'Access key Kept updated' },
    ]);
  });

  it('needs the new secret when the type changes', async () => {
    const key = await createKey(loginPassword('Switch'));
    const url = `${team.base}/keys/${key.id}`;
    const before = await snapshot(h);
    const res = await team.owner.put(url, { name: 'Switch', type: 'ssh' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Private key is required');
    expect(await snapshot(h)).toEqual(before);
    const ok = await team.owner.put(url, { name: 'Switch', type: 'ssh', ssh: { private_key: 'KEY' } });
    expect(ok.statusCode).toBe(204);
    expect(await getDecryptedKey(h.deps, team.projectId, key.id)).toMatchObject({
      type: 'ssh',
      private_key: 'KEY',
      password: '',
    });
    expect((await team.owner.put(url, { name: 'Switch', type: 'none' })).statusCode).toBe(204);
    const row = await h.deps.db
      .selectFrom('access_key')
      .select('secret')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.secret).toBeNull();
  });

  it('answers every validation message', async () => {
    const cases: [object, string][] = [
      [{ type: 'none' }, 'Name is required'],
      [{ name: '   ', type: 'none' }, 'Name is required'],
      [{ name: 'x' }, 'Type is required'],
      [{ name: 'x', type: '' }, 'Type is required'],
      [{ name: 'x', type: 'string' }, 'Type must be one of none, ssh, login_password'],
      [{ name: 'x', type: 'login_password' }, 'Password is required'],
      [
        { name: 'x', type: 'login_password', login_password: { login: 'a', password: '' } },
        'Password is required',
      ],
      [{ name: 'x', type: 'ssh', ssh: { login: 'a' } }, 'Private key is required'],
      [{ name: 'x', type: 'ssh', ssh: { private_key: '  ' } }, 'Private key is required'],
      [{ name: 'x'.repeat(256), type: 'none' }, 'Name must be at most 255 characters'],
      [{ name: 'x', type: 'none', project_id: other.projectId }, 'Project ID in body and URL are different'],
    ];
    const before = await snapshot(h);
    for (const [body, error] of cases) {
      const res = await team.owner.post(`${team.base}/keys`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe(error);
    }
    const key = await createKey(loginPassword('Valid'));
    const mid = await snapshot(h);
    const put = await team.owner.put(`${team.base}/keys/${key.id}`, {
      name: 'Valid',
      type: 'login_password',
      override_secret: true,
      login_password: { login: 'x' },
    });
    expect(put.json().error).toBe('Password is required');
    const idMismatch = await team.owner.put(`${team.base}/keys/${key.id}`, {
      id: key.id + 1,
      name: 'v',
      type: 'none',
    });
    expect(idMismatch.json().error).toBe('Object ID in body and URL are different');
    expect(await snapshot(h)).toEqual(mid);
    expect(before.access_key!.length + 1).toBe(mid.access_key!.length);
  });

  it('refuses malformed bodies, wrong types and 1 MB strings without changing anything', async () => {
    const key = await createKey(loginPassword('Robust'));
    const bad = [
      ...malformedBodies,
      { name: 5, type: 'none' },
      { name: 'x', type: 5 },
      { name: 'x', type: 'none', override_secret: 'yes' },
      { name: 'x', type: 'login_password', login_password: 'pw' },
      { name: 'x', type: 'login_password', login_password: { login: 1, password: 'p' } },
      { name: 'x', type: 'login_password', login_password: { password: ['p'] } },
      { name: 'x', type: 'ssh', ssh: { private_key: 42 } },
      { name: 'x', type: 'none', project_id: 'one' },
      { name: MEGABYTE, type: 'none' },
      { name: 'x', type: MEGABYTE },
      { name: 'x', type: 'login_password', login_password: { login: MEGABYTE, password: 'p' } },
      { name: 'x', type: 'login_password', login_password: { login: 'l', password: MEGABYTE } },
      { name: 'x', type: 'ssh', ssh: { private_key: MEGABYTE } },
      { name: 'x', type: 'ssh', ssh: { private_key: 'k', passphrase: MEGABYTE } },
    ];
    await expectRejected(h, team.owner, 'POST', `${team.base}/keys`, bad);
    await expectRejected(h, team.owner, 'PUT', `${team.base}/keys/${key.id}`, [
      ...bad,
      { name: 'x', type: 'login_password', override_secret: true, login_password: { password: MEGABYTE } },
    ]);
  });

  it('answers 404 for a key of another project and changes nothing there', async () => {
    const foreign = await createKey(loginPassword('Foreign'), other);
    const url = `${team.base}/keys/${foreign.id}`;
    // A global admin addressing the key through the wrong project is refused too.
    await expectForeignNotFound(h, team, url, { name: 'Stolen', type: 'none' });
    const put = await team.owner.put(url, { name: 'Stolen', type: 'none' });
    expect(put.json()).toMatchObject({ error: 'Access key not found' });
  });

  it('lists refs and refuses to delete a key in use with 409', async () => {
    const key = await createKey(loginPassword('Used'));
    const repo = await h.deps.db
      .insertInto('repository')
      .values({
        project_id: team.projectId,
        name: 'Uses key',
        git_url: 'https://example.test/r.git',
        git_branch: 'main',
        ssh_key_id: key.id,
      })
      .executeTakeFirst();
    const refs = await team.guest.get(`${team.base}/keys/${key.id}/refs`);
    expect(refs.statusCode).toBe(200);
    expect(refs.json().repositories).toEqual([{ id: expect.any(Number), name: 'Uses key' }]);
    await expectDeleteRefused(
      h,
      team.owner,
      `${team.base}/keys/${key.id}`,
      "Can't delete the access key because it is used by the resources below",
      { repositories: [{ name: 'Uses key' }] },
    );
    void repo;
    await h.deps.db.deleteFrom('repository').where('name', '=', 'Uses key').execute();
    const unused = await team.owner.get(`${team.base}/keys/${key.id}/refs`);
    expect(unused.json()).toEqual(noRefs);
    expect((await team.owner.del(`${team.base}/keys/${key.id}`)).statusCode).toBe(204);
    expect((await team.owner.get(`${team.base}/keys/${key.id}`)).statusCode).toBe(404);
    expect(await lastEvents(h, team.projectId, 1)).toEqual([
      { object_type: 'key', object_id: key.id, description: 'Access key Used deleted' },
    ]);
  });

  describe('permission matrix', () => {
    resourceMatrixTests(
      () => team,
      'keys',
      () => createKey(),
      (caller, method) => ({
        name: `${method === 'POST' ? 'by' : 'renamed by'} ${caller}`,
        type: method === 'POST' ? 'none' : 'login_password',
      }),
    );
    it('unknown project is 404 and a bad project id 400', async () => {
      expect((await team.admin.get('/api/project/999999/keys')).statusCode).toBe(404);
      expect((await team.admin.get('/api/project/abc/keys')).statusCode).toBe(400);
    });
  });
});
