import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDatabase, testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { buildApp } from '../app';
import { loadConfig } from '../config';
import { openDb } from './index';
import { SECRET_KEY_OPTION, SecretKeyMismatchError, secretKeyFingerprint } from './options';

const newKey = () => randomBytes(32).toString('base64');

describe.each(testDialects())('the secret key shared by the servers of one database on $name', (dialect) => {
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let url: string;
  let a: Harness;
  const keyA = newKey();
  const dirs: string[] = [];

  beforeAll(async () => {
    shared = await sharedDatabase(dialect, 'sb-secret-key-');
    url = (await shared.dialect.create('')).url;
    a = await createHarness(shared.dialect, { secretKey: keyA });
  });
  afterAll(async () => {
    await a?.close();
    await shared?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const handles: ReturnType<typeof openDb>[] = [];
  afterAll(async () => {
    for (const handle of handles) await handle.destroy();
  });

  /** Builds another server on the same database with this key, or with its own generated one. */
  async function otherServer(secretKey?: string) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-secret-key-other-'));
    dirs.push(dataDir);
    // The app never closes a handle it was given: they are closed after the tests.
    const handle = openDb(url);
    handles.push(handle);
    const config = loadConfig(
      {},
      { dataDir, dbUrl: url, bcryptCost: 4, ...(secretKey ? { secretKey } : {}) },
    );
    const { app, deps } = await buildApp(config, { db: handle, logger: false });
    return { deps, close: () => app.close() };
  }

  async function storedSecretOfNewKey() {
    const owner = await a.userClient({ admin: true });
    const project = (await owner.post('/api/projects', { name: `keys ${Date.now()}` })).json();
    const created = await owner.post(`/api/project/${project.id}/keys`, {
      name: 'deploy login',
      type: 'login_password',
      project_id: project.id,
      login_password: { login: 'deployer', password: 'hunter2-on-a' },
    });
    expect(created.statusCode).toBe(201);
    const row = await a.deps.db
      .selectFrom('access_key')
      .select('secret')
      .where('id', '=', created.json().id)
      .executeTakeFirstOrThrow();
    return String(row.secret);
  }

  it('records the first server key as a fingerprint that reveals nothing of it', async () => {
    const row = await a.deps.db
      .selectFrom('option')
      .select('value')
      .where('key', '=', SECRET_KEY_OPTION)
      .executeTakeFirstOrThrow();
    expect(row.value).toBe(secretKeyFingerprint(Buffer.from(keyA, 'base64')));
    expect(row.value).not.toContain(Buffer.from(keyA, 'base64').toString('hex'));
  });

  it('starts a server with the same key, which opens the secrets the first one sealed', async () => {
    const sealed = await storedSecretOfNewKey();
    const b = await otherServer(keyA);
    try {
      expect(JSON.parse(b.deps.box.open(sealed))).toMatchObject({
        login: 'deployer',
        password: 'hunter2-on-a',
      });
    } finally {
      await b.close();
    }
  });

  it('refuses to start a server with another key, or with a generated one, saying to share the key', async () => {
    for (const key of [newKey(), undefined]) {
      const start = otherServer(key);
      await expect(start).rejects.toBeInstanceOf(SecretKeyMismatchError);
      await expect(start).rejects.toThrow(/same key: set SIGNALBOX_SECRET_KEY/);
    }
  });

  it('gives a database from before fingerprints one only under the key its stored secrets open with', async () => {
    const sealed = await storedSecretOfNewKey();
    expect(sealed).not.toBe('');
    await a.deps.db.deleteFrom('option').where('key', '=', SECRET_KEY_OPTION).execute();
    await expect(otherServer(newKey())).rejects.toBeInstanceOf(SecretKeyMismatchError);
    expect(
      await a.deps.db
        .selectFrom('option')
        .select('value')
        .where('key', '=', SECRET_KEY_OPTION)
        .executeTakeFirst(),
    ).toBeUndefined();
    const b = await otherServer(keyA);
    await b.close();
    const row = await a.deps.db
      .selectFrom('option')
      .select('value')
      .where('key', '=', SECRET_KEY_OPTION)
      .executeTakeFirstOrThrow();
    expect(row.value).toBe(secretKeyFingerprint(Buffer.from(keyA, 'base64')));
  });
});
