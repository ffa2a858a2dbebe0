import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import { getEnvironmentSecrets } from '../environments/environments.service';
import { getDecryptedKey } from './keys.service';

/**
 * Stored secrets (key passwords, private keys, passphrases, environment secrets) never leave the server: not in a
 * response of any key/repository/inventory/environment route, not in a log line, and not as plaintext in the DB.
 */
describe.each(testDialects())('secrets stay secret on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  const stamp = Math.random().toString(36).slice(2, 10);
  const secrets = {
    password: `pw-${stamp}-Q7xz`,
    newPassword: `pw2-${stamp}-R8yw`,
    privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\nPK${stamp}b3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\n`,
    passphrase: `pp-${stamp}-S9vu`,
    envVar: `ev-${stamp}-T1ts`,
    extraVar: `xv-${stamp}-U2sr`,
    updatedEnv: `ue-${stamp}-V3rq`,
  };
  const needles = [...Object.values(secrets), `PK${stamp}b3BlbnNzaC1rZXk`];
  const responses: LightMyRequestResponse[] = [];
  const record = (res: LightMyRequestResponse) => {
    responses.push(res);
    return res;
  };

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Secrets');
  });
  afterAll(async () => h?.close());

  it('never returns or logs a stored secret and stores only ciphertext', async () => {
    const { base, owner, guest, admin } = team;
    const lp = record(
      await owner.post(`${base}/keys`, {
        name: 'Login',
        type: 'login_password',
        login_password: { login: 'deploy', password: secrets.password },
      }),
    ).json();
    const ssh = record(
      await owner.post(`${base}/keys`, {
        name: 'SSH',
        type: 'ssh',
        ssh: { login: 'git', passphrase: secrets.passphrase, private_key: secrets.privateKey },
      }),
    ).json();
    const repo = record(
      await owner.post(`${base}/repositories`, {
        name: 'Repo',
        git_url: 'git@example.test:org/app.git',
        git_branch: 'main',
        ssh_key_id: ssh.id,
      }),
    ).json();
    const inv = record(
      await owner.post(`${base}/inventory`, {
        name: 'Inv',
        type: 'static',
        inventory: '[all]\nhost\n',
        ssh_key_id: lp.id,
        become_key_id: lp.id,
      }),
    ).json();
    const env = record(
      await owner.post(`${base}/environment`, {
        name: 'Env',
        json: '{}',
        env: '{}',
        secrets: [
          { type: 'env', name: 'TOKEN', secret: secrets.envVar, operation: 'create' },
          { type: 'var', name: 'db_password', secret: secrets.extraVar, operation: 'create' },
        ],
      }),
    ).json();

    // Every read route, as a guest and as an admin.
    for (const client of [owner, guest, admin]) {
      for (const path of [
        '/keys',
        `/keys/${lp.id}`,
        `/keys/${ssh.id}`,
        `/keys/${lp.id}/refs`,
        `/keys/${ssh.id}/refs`,
        '/repositories',
        `/repositories/${repo.id}`,
        `/repositories/${repo.id}/refs`,
        '/inventory',
        `/inventory/${inv.id}`,
        `/inventory/${inv.id}/refs`,
        '/environment',
        `/environment/${env.id}`,
        `/environment/${env.id}/refs`,
        '/events/last',
      ]) {
        const res = record(await client.get(`${base}${path}`));
        expect(res.statusCode, path).toBe(200);
      }
    }

    // Updates, refusals and failures that carry secrets in their request.
    record(await owner.put(`${base}/keys/${lp.id}`, { name: 'Login', type: 'login_password' }));
    record(
      await owner.put(`${base}/keys/${lp.id}`, {
        name: 'Login',
        type: 'login_password',
        override_secret: true,
        login_password: { login: 'deploy', password: secrets.newPassword },
      }),
    );
    record(
      await owner.post(`${base}/keys`, {
        type: 'login_password',
        login_password: { login: 'x', password: secrets.password },
      }),
    );
    record(
      await owner.post(`${base}/keys`, {
        name: 'x',
        type: 'ssh',
        ssh: { private_key: 42, passphrase: secrets.passphrase },
      }),
    );
    record(
      await owner.request(
        'POST',
        `${base}/keys`,
        `{"name":"x","type":"login_password","login_password":{"password":"${secrets.password}"`,
      ),
    );
    record(
      await guest.post(`${base}/keys`, { name: 'g', type: 'ssh', ssh: { private_key: secrets.privateKey } }),
    );
    record(await owner.del(`${base}/keys/${lp.id}`)); // 409: in use by the inventory
    record(await owner.del(`${base}/keys/${ssh.id}`)); // 409: in use by the repository
    record(
      await owner.put(`${base}/environment/${env.id}`, {
        name: 'Env',
        secrets: [
          {
            id: env.secrets[0].id,
            type: 'env',
            name: 'TOKEN',
            secret: secrets.updatedEnv,
            operation: 'update',
          },
        ],
      }),
    );
    record(
      await owner.put(`${base}/environment/${env.id}`, {
        name: '',
        secrets: [{ type: 'env', name: 'LEAK', secret: secrets.envVar, operation: 'create' }],
      }),
    );
    record(
      await owner.put(`${base}/environment/${env.id}`, {
        name: 'Env',
        secrets: [{ id: 999999, type: 'env', name: 'LEAK', secret: secrets.envVar, operation: 'update' }],
      }),
    );
    for (const path of ['/keys', `/keys/${lp.id}`, `/environment/${env.id}`, '/environment']) {
      record(await owner.get(`${base}${path}`));
    }

    expect(responses.length).toBeGreaterThan(50);
    for (const res of responses) {
      const text = `${JSON.stringify(res.headers)}\n${res.body}`;
      for (const needle of needles)
        expect(text, `${res.statusCode} ${res.body.slice(0, 200)}`).not.toContain(needle);
    }
    const log = h.logLines.join('\n');
    expect(h.logLines.length).toBeGreaterThan(0);
    for (const needle of needles) expect(log).not.toContain(needle);

    // At rest: ciphertext only, and it opens to the secret.
    const rows = await h.deps.db
      .selectFrom('access_key')
      .select(['id', 'secret', 'name'])
      .where('project_id', '=', team.projectId)
      .execute();
    for (const row of rows) for (const needle of needles) expect(row.secret ?? '').not.toContain(needle);
    const stored = rows.find((r) => r.id === ssh.id)!;
    expect(stored.secret).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(h.deps.box.open(stored.secret!)).toContain(`PK${stamp}`);
    expect(await getDecryptedKey(h.deps, team.projectId, lp.id)).toMatchObject({
      password: secrets.newPassword,
    });
    expect(await getDecryptedKey(h.deps, team.projectId, ssh.id)).toMatchObject({
      private_key: secrets.privateKey,
      passphrase: secrets.passphrase,
    });
    expect((await getEnvironmentSecrets(h.deps, env.id)).map((s) => s.value).sort()).toEqual(
      [secrets.updatedEnv, secrets.extraVar].sort(),
    );
  });
});
