import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import { lastEvents } from '../../../test/support/resource-team';
import { insertTemplate } from '../../../test/support/task-fixtures';
import { loadConfig } from '../../config';
import {
  applySourceText,
  checkKeySource,
  envNameProblem,
  KeySourceError,
  readKeySource,
} from '../../lib/key-sources';
import { getDecryptedKey, KEY_SOURCE_ADMIN_ONLY } from './keys.service';

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

/** The English wording of a refusal, or null. */
const said = (problem: Parameters<typeof errorMessage>[0] | null) => (problem ? errorMessage(problem) : null);

describe('key source rules', () => {
  const config = { keyEnvPrefix: 'SIGNALBOX_KEY_', keyFilesDir: undefined as string | undefined };

  it('allows only variables with the prefix, and never a setting of the server', () => {
    expect(envNameProblem(config, 'SIGNALBOX_KEY_DEPLOY')).toBeNull();
    expect(said(envNameProblem(config, 'SIGNALBOX_SECRET_KEY'))).toMatch(/must start with SIGNALBOX_KEY_/);
    expect(said(envNameProblem(config, 'PATH'))).toMatch(/must start with SIGNALBOX_KEY_/);
    expect(said(envNameProblem(config, 'SIGNALBOX_KEY_'))).toMatch(/must start with/);
    expect(said(envNameProblem(config, 'SIGNALBOX_KEY_A-B'))).toMatch(/not a valid name/);
    expect(said(envNameProblem(config, 'signalbox_key_x'))).toMatch(/must start with/);
    // A prefix widened to every SIGNALBOX_ name still never reaches the server's own settings.
    const wide = { ...config, keyEnvPrefix: 'SIGNALBOX_' };
    expect(said(envNameProblem(wide, 'SIGNALBOX_SECRET_KEY'))).toMatch(/is a setting of the server/);
    expect(said(envNameProblem(wide, 'SIGNALBOX_DB_URL'))).toMatch(/is a setting of the server/);
    expect(
      said(envNameProblem({ ...config, keyEnvPrefix: 'SEMAPHORE_' }, 'SEMAPHORE_ACCESS_KEY_ENCRYPTION')),
    ).toMatch(/is a setting of the server/);
    expect(envNameProblem(wide, 'SIGNALBOX_DEPLOY_PASSWORD')).toBeNull();
  });

  it('refuses every file when no key files directory is configured', async () => {
    await expect(checkKeySource(config, 'file', '/etc/hostname')).rejects.toMatchObject({
      statusCode: 400,
      message: 'Keys cannot read files on this server: SIGNALBOX_KEY_FILES_DIR is not set',
    });
    await expect(readKeySource(config, 'file', '/etc/hostname')).rejects.toBeInstanceOf(KeySourceError);
  });

  it('reads a source text as the password or private key, or as the peer JSON', () => {
    const stored = { login: 'deploy', password: '', passphrase: 'pp', private_key: '' };
    expect(applySourceText('login_password', stored, 'pw-1\n')).toEqual({ ...stored, password: 'pw-1' });
    expect(applySourceText('ssh', stored, '-----BEGIN KEY-----\nabc\n')).toEqual({
      ...stored,
      private_key: '-----BEGIN KEY-----\nabc\n',
    });
    expect(applySourceText('login_password', stored, '{"login":"other","password":"pw-2"}')).toEqual({
      ...stored,
      login: 'other',
      password: 'pw-2',
    });
    // A password that only looks like JSON stays a password.
    expect(applySourceText('login_password', stored, '{not json')).toEqual({
      ...stored,
      password: '{not json',
    });
    expect(applySourceText('login_password', stored, '{"x":1}')).toEqual({ ...stored, password: '{"x":1}' });
  });

  it('has settings for the prefix, the directory and the run-once grace, with checked values', () => {
    expect(loadConfig({})).toMatchObject({ keyEnvPrefix: 'SIGNALBOX_KEY_', runOnceGrace: 900 });
    expect(loadConfig({}).keyFilesDir).toBeUndefined();
    expect(() => loadConfig({ SIGNALBOX_KEY_FILES_DIR: 'relative/dir' })).toThrow(
      'SIGNALBOX_KEY_FILES_DIR: must be an absolute path',
    );
    expect(() => loadConfig({ SIGNALBOX_KEY_ENV_PREFIX: 'BAD-PREFIX' })).toThrow(/SIGNALBOX_KEY_ENV_PREFIX/);
    expect(() => loadConfig({ SIGNALBOX_RUN_ONCE_GRACE: '-1' })).toThrow(/SIGNALBOX_RUN_ONCE_GRACE/);
  });
});

describe.each(testDialects())('keys reading their secret on the server, on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let dir: string;
  let outside: string;
  let started = 0;
  const envName = `SIGNALBOX_KEY_API_${randomBytes(4).toString('hex').toUpperCase()}`;
  const envValue = secret('env-password');
  const fileValue = `-----BEGIN OPENSSH PRIVATE KEY-----\n${secret('file-key')}\n-----END OPENSSH PRIVATE KEY-----\n`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-key-files-'));
    outside = mkdtempSync(join(tmpdir(), 'sb-key-outside-'));
    mkdirSync(join(dir, 'deploy'));
    writeFileSync(join(dir, 'deploy', 'id_ed25519'), fileValue, { mode: 0o600 });
    writeFileSync(join(outside, 'secret.txt'), 'not for keys\n');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'escape'));
    symlinkSync(outside, join(dir, 'escape-dir'));
    symlinkSync(join(dir, 'deploy', 'id_ed25519'), join(dir, 'inner-link'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    process.env[envName] = envValue;
    // Webhooks ask this to start their task (starting one has its own tests).
    h = await createHarness(dialect, { keyFilesDir: dir }, { startTask: async () => ++started });
    team = await createTeam(h, 'Server keys');
  });
  afterAll(async () => {
    delete process.env[envName];
    await h?.close();
    for (const d of [dir, outside]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const url = () => `${team.base}/keys`;
  const envKey = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    type: 'login_password',
    login_password: { login: 'deploy' },
    source_storage_type: 'env',
    source_storage_key: envName,
    ...extra,
  });

  it('lets an admin create env and file keys, answered without any secret', async () => {
    const res = await team.admin.post(url(), envKey('From env'));
    expect(res.statusCode, res.body).toBe(201);
    const env = res.json();
    expect(env).toEqual({
      id: expect.any(Number),
      name: 'From env',
      type: 'login_password',
      project_id: team.projectId,
      login_password: { login: 'deploy' },
      source_storage_type: 'env',
      source_storage_key: envName,
      has_secret: true,
    });
    expect(await getDecryptedKey(h.deps, team.projectId, env.id)).toMatchObject({
      login: 'deploy',
      password: envValue,
    });

    const file = await team.admin.post(url(), {
      name: 'From file',
      type: 'ssh',
      ssh: { login: 'git', passphrase: '' },
      source_storage_type: 'file',
      source_storage_key: 'deploy/id_ed25519',
    });
    expect(file.statusCode, file.body).toBe(201);
    expect(file.json()).toMatchObject({
      type: 'ssh',
      ssh: { login: 'git' },
      source_storage_type: 'file',
      source_storage_key: join(dir, 'deploy', 'id_ed25519'),
    });
    expect(await getDecryptedKey(h.deps, team.projectId, file.json().id)).toMatchObject({
      login: 'git',
      private_key: fileValue,
    });
    // A symlink that stays inside the directory is fine.
    const inner = await team.admin.post(url(), {
      name: 'Inner link',
      type: 'ssh',
      source_storage_type: 'file',
      source_storage_key: join(dir, 'inner-link'),
    });
    expect(inner.statusCode, inner.body).toBe(201);

    // Nothing any member can read holds a value.
    for (const path of ['/keys', `/keys/${env.id}`, `/keys/${file.json().id}`]) {
      const body = (await team.guest.get(`${team.base}${path}`)).body;
      expect(body).not.toContain(envValue);
      expect(body).not.toContain(fileValue.split('\n')[1]);
    }
    expect(await lastEvents(h, team.projectId, 1)).toEqual([
      { object_type: 'key', object_id: inner.json().id, description: 'Access key Inner link created' },
    ]);
    for (const line of h.logLines) {
      expect(line).not.toContain(envValue);
      expect(line).not.toContain(fileValue.split('\n')[1]);
    }
  });

  it('refuses non-admin project owners and managers with 403, changing nothing', async () => {
    const stored = (
      await team.owner.post(url(), {
        name: 'Stored',
        type: 'login_password',
        login_password: { login: 'u', password: 'pw' },
      })
    ).json();
    const sourced = (await team.admin.post(url(), envKey('Admin made'))).json();
    for (const client of [team.owner, team.manager]) {
      for (const res of [
        await client.post(url(), envKey('Mine')),
        await client.post(url(), {
          ...envKey('Mine'),
          source_storage_type: 'file',
          source_storage_key: '/etc/shadow',
        }),
        await client.put(`${url()}/${stored.id}`, envKey('Stored')),
        await client.put(`${url()}/${sourced.id}`, { name: 'Renamed', type: 'login_password' }),
        await client.put(`${url()}/${sourced.id}`, {
          name: 'Admin made',
          type: 'login_password',
          override_secret: true,
          login_password: { login: 'u', password: 'now stored' },
        }),
      ]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().code).toBe(KEY_SOURCE_ADMIN_ONLY.code);
      }
    }
    expect((await team.admin.get(`${url()}/${sourced.id}`)).json()).toMatchObject({
      name: 'Admin made',
      source_storage_key: envName,
    });
    expect((await team.admin.get(`${url()}/${stored.id}`)).json()).not.toHaveProperty('source_storage_type');
    // Deleting one is an ordinary change of the project.
    expect((await team.owner.del(`${url()}/${sourced.id}`)).statusCode).toBe(204);
  });

  it('refuses variables and files outside what the server allows, naming the problem', async () => {
    const cases: Array<[string, string, string | RegExp]> = [
      [
        'env',
        'SIGNALBOX_SECRET_KEY',
        /^Environment variable "SIGNALBOX_SECRET_KEY" is not allowed: key variables must start with SIGNALBOX_KEY_/,
      ],
      ['env', 'HOME', /must start with SIGNALBOX_KEY_/],
      ['env', 'SIGNALBOX_KEY_X;rm', /is not a valid name/],
      ['env', '', 'Secret source key is required'],
      ['file', '', 'Secret source key is required'],
      ['file', '../outside', 'File path "../outside" must not contain ".."'],
      ['file', `${dir}/deploy/../../etc/shadow`, /must not contain "\.\."/],
      [
        'file',
        '/etc/shadow',
        `File path "/etc/shadow" is not inside the key files directory ${dir} (SIGNALBOX_KEY_FILES_DIR)`,
      ],
      ['file', `${dir}-other/x`, /is not inside the key files directory/],
      ['file', dir, /is not inside the key files directory/],
      ['file', 'escape', 'File path "escape" leads out of the key files directory (through a symbolic link)'],
      ['file', 'escape-dir/secret.txt', /leads out of the key files directory/],
      ['file', 'escape-dir/not-yet', /leads out of the key files directory/],
      ['file', 'deploy', 'File path "deploy" is not a regular file'],
      ['file', 'fifo', 'File path "fifo" is not a regular file'],
      ['file', 'bad\nname', 'Secret source key must not contain control characters'],
    ];
    for (const [type, key, message] of cases) {
      const res = await team.admin.post(
        url(),
        envKey('Refused', { source_storage_type: type, source_storage_key: key }),
      );
      expect(res.statusCode, `${type} ${key}: ${res.body}`).toBe(400);
      const answer = res.json();
      if (typeof message === 'string') expect(answer.error).toBe(message);
      else expect(answer.error).toMatch(message);
      expect(Object.keys(answer.fields ?? {})).toEqual(['source_storage_key']);
    }
    const none = await team.admin.post(url(), {
      name: 'None',
      type: 'none',
      source_storage_type: 'env',
      source_storage_key: envName,
    });
    expect(none.statusCode).toBe(400);
    expect(none.json().error).toBe('A key of type none has no secret to read');
    const unknown = await team.admin.post(url(), envKey('Vault', { source_storage_type: 'vault' }));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatch(/^Secret source must be one of/);
    // A file that does not exist yet is accepted; tasks fail naming it until it does.
    const later = await team.admin.post(
      url(),
      envKey('Later', { source_storage_type: 'file', source_storage_key: 'later/pw' }),
    );
    expect(later.statusCode, later.body).toBe(201);
    await expect(getDecryptedKey(h.deps, team.projectId, later.json().id)).rejects.toThrow(
      `Key "Later": File ${join(dir, 'later', 'pw')} does not exist on the server`,
    );
    expect(
      (await team.admin.get(url())).json().filter((k: { name: string }) => k.name === 'Refused'),
    ).toEqual([]);
  });

  it('moves a secret between the database and the server, never keeping a stale stored password', async () => {
    const key = (
      await team.admin.post(url(), {
        name: 'Moving',
        type: 'login_password',
        login_password: { login: 'mover', password: 'stored-pw-1' },
      })
    ).json();
    let res = await team.admin.put(
      `${url()}/${key.id}`,
      envKey('Moving', { login_password: { login: 'mover' } }),
    );
    expect(res.statusCode, res.body).toBe(204);
    const row = await h.deps.db
      .selectFrom('access_key')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(h.deps.box.open(row.secret ?? '')).toBe('{"login":"mover"}');
    expect(await getDecryptedKey(h.deps, team.projectId, key.id)).toMatchObject({
      login: 'mover',
      password: envValue,
    });

    // The variable can be renamed without touching the stored part.
    const other = `${envName}_B`;
    process.env[other] = 'second-value';
    res = await team.admin.put(`${url()}/${key.id}`, envKey('Moving', { source_storage_key: other }));
    expect(res.statusCode, res.body).toBe(204);
    expect(await getDecryptedKey(h.deps, team.projectId, key.id)).toMatchObject({
      login: 'mover',
      password: 'second-value',
    });
    delete process.env[other];

    // Back to a stored secret: the password is required again.
    res = await team.admin.put(`${url()}/${key.id}`, {
      name: 'Moving',
      type: 'login_password',
      login_password: { login: 'mover' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('Password is required');
    res = await team.admin.put(`${url()}/${key.id}`, {
      name: 'Moving',
      type: 'login_password',
      login_password: { login: 'mover', password: 'stored-pw-2' },
    });
    expect(res.statusCode, res.body).toBe(204);
    expect((await team.admin.get(`${url()}/${key.id}`)).json()).not.toHaveProperty('source_storage_key');
    expect(await getDecryptedKey(h.deps, team.projectId, key.id)).toMatchObject({ password: 'stored-pw-2' });
  });

  it('checks a webhook against a secret read from the server, refusing it when the variable is gone', async () => {
    const key = (await team.admin.post(url(), envKey('Webhook token'))).json();
    const tpl = await insertTemplate(h.deps, team.projectId, { name: 'Hooked', playbook: 'deploy.sh' });
    const created = await team.owner.post(`${team.base}/integrations`, {
      name: 'Hook',
      template_id: tpl,
      auth_method: 'token',
      auth_secret_id: key.id,
      auth_header: 'X-Deploy-Token',
    });
    expect(created.statusCode, created.body).toBe(201);
    const alias = (await team.owner.post(`${team.base}/integrations/${created.json().id}/aliases`)).json()
      .alias;
    const send = (token: string) =>
      h.app.inject({
        method: 'POST',
        url: `/api/integrations/${alias}`,
        payload: '{}',
        headers: { 'content-type': 'application/json', 'x-deploy-token': token },
      });
    const before = started;
    expect((await send('wrong')).statusCode).toBe(401);
    expect((await send(envValue)).statusCode).toBe(204);
    expect(started).toBe(before + 1);

    delete process.env[envName];
    try {
      expect((await send(envValue)).statusCode).toBe(401);
    } finally {
      process.env[envName] = envValue;
    }
    expect(started).toBe(before + 1);
    expect(
      h.logLines.some(
        (l) =>
          l.includes('integration auth secret unreadable') &&
          l.includes(`Environment variable ${envName} is not set on the server`),
      ),
    ).toBe(true);
  });

  it('fails a read naming the variable or file, never its content', async () => {
    const missing = `${envName}_MISSING`;
    const key = (await team.admin.post(url(), envKey('Missing', { source_storage_key: missing }))).json();
    await expect(getDecryptedKey(h.deps, team.projectId, key.id)).rejects.toThrow(
      `Key "Missing": Environment variable ${missing} is not set on the server`,
    );
    const swapped = join(dir, 'swapped');
    writeFileSync(swapped, 'fine\n');
    const file = (
      await team.admin.post(
        url(),
        envKey('Swapped', { source_storage_type: 'file', source_storage_key: swapped }),
      )
    ).json();
    expect(await getDecryptedKey(h.deps, team.projectId, file.id)).toMatchObject({ password: 'fine' });
    // Replaced by a link out of the directory after the key was saved: the read refuses it.
    rmSync(swapped);
    symlinkSync(join(outside, 'secret.txt'), swapped);
    const failure = await getDecryptedKey(h.deps, team.projectId, file.id).catch((err: Error) => err.message);
    expect(failure).toBe(
      `Key "Swapped": File ${swapped} leads out of the key files directory (through a symbolic link)`,
    );
    expect(failure).not.toContain('not for keys');
  });
});
