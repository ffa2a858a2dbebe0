import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedDatabase, testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { insertKey, insertTemplate, taskRow } from '../../../test/support/task-fixtures';
import { buildApp } from '../../app';
import { loadConfig } from '../../config';
import { openDb } from '../../db';
import { SecretKeyMismatchError } from '../../db/options';
import { insertReturningId } from '../../db/values';
import { createSecretBox, SecretKeyRotationUnfinishedError, secretKeyFingerprint } from '../../lib/crypto';
import { decodeKey, decodeSecretValue } from '../../tasks/run/job';
import { RotationError, rotateSecrets, rotationState, SEALED_TABLES, type SealedTable } from './rotate';

const newKey = () => randomBytes(32);

/** A value in the format of before the version byte: base64(nonce | ciphertext | tag). */
function sealLegacy(key: Buffer, plain: string) {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

describe.each(testDialects())('rotating the secret key on $name', (dialect) => {
  let shared: Awaited<ReturnType<typeof sharedDatabase>>;
  let url: string;
  let h: Harness;
  const keyA = newKey();
  /** The keys later tests rotated to, in order (the newest is the database's). */
  const rotated: Buffer[] = [];
  const dirs: string[] = [];
  const handles: ReturnType<typeof openDb>[] = [];
  /** Every sealed value's text, by table and id, as stored before any rotation. */
  const plain = new Map<string, string>();
  let projectId: number;

  beforeAll(async () => {
    shared = await sharedDatabase(dialect, 'sb-rotate-');
    url = (await shared.dialect.create('')).url;
    h = await createHarness(shared.dialect, { secretKey: keyA.toString('base64') });
    const owner = await h.userClient({ admin: true });
    const project = (await owner.post('/api/projects', { name: 'rotation' })).json() as { id: number };
    projectId = project.id;
    const environmentId = await insertReturningId(h.deps.db, h.deps.dialect, 'environment', {
      project_id: project.id,
      name: 'prod',
      json: '{}',
      env: '{}',
    });
    const box = h.deps.box;
    // Keys of the key store (more than one batch of them), one still in the format before the version byte,
    // environment secrets and a secret variable, survey secrets of tasks, and a TOTP.
    for (let i = 0; i < 5; i++) {
      const secret = { login: `deployer-${i}`, password: `hunter2-${i}` };
      const id = await insertKey(h.deps, project.id, { name: `login ${i}`, type: 'login_password', secret });
      plain.set(`access_key ${id}`, JSON.stringify(secret));
    }
    const legacyText = JSON.stringify({ login: 'old', password: 'from-before-versions' });
    const legacyId = await insertReturningId(h.deps.db, h.deps.dialect, 'access_key', {
      project_id: project.id,
      name: 'legacy',
      type: 'login_password',
      secret: sealLegacy(keyA, legacyText),
      owner: '',
      environment_id: null,
    });
    plain.set(`access_key ${legacyId}`, legacyText);
    for (const owner of ['environment', 'variable']) {
      const id = await insertKey(h.deps, project.id, {
        name: `DB_PASSWORD_${owner}`,
        type: 'string',
        secret: `s3cret-${owner}`,
        owner,
        environment_id: environmentId,
      });
      plain.set(`access_key ${id}`, `s3cret-${owner}`);
    }
    const templateId = await insertTemplate(h.deps, project.id);
    for (let i = 0; i < 3; i++) {
      const text = JSON.stringify({ token: `survey-${i}` });
      const id = await insertReturningId(
        h.deps.db,
        h.deps.dialect,
        'task',
        // Waiting for a person's approval: kept with its secret, and not a task the engine's queue would run and end.
        taskRow(project.id, templateId, { status: 'waiting_approval', secret: box.seal(text) }),
      );
      plain.set(`task ${id}`, text);
    }
    await insertReturningId(
      h.deps.db,
      h.deps.dialect,
      'task',
      taskRow(project.id, templateId, { secret: null }),
    );
    // A Terraform state of the built-in backend (gzipped, then sealed).
    const stateId = await insertReturningId(h.deps.db, h.deps.dialect, 'terraform_state', {
      project_id: project.id,
      name: 'net',
      created: new Date().toISOString(),
    });
    const stateText = gzipSync('{"version":4,"serial":1,"lineage":"l"}').toString('base64');
    const versionId = await insertReturningId(h.deps.db, h.deps.dialect, 'terraform_state_version', {
      state_id: stateId,
      project_id: project.id,
      serial: 1,
      lineage: 'l',
      size: 37,
      secret: box.seal(stateText),
      created: new Date().toISOString(),
      user_id: null,
      task_id: null,
      source: 'write',
      rolled_back_from: null,
    });
    plain.set(`terraform_state_version ${versionId}`, stateText);
    const totpId = await insertReturningId(h.deps.db, h.deps.dialect, 'user_totp', {
      user_id: owner.userId,
      created: new Date().toISOString(),
      secret: box.seal('JBSWY3DPEHPK3PXP'),
      confirmed: 1,
      confirmed_at: new Date().toISOString(),
      last_step: null,
    });
    plain.set(`user_totp ${totpId}`, 'JBSWY3DPEHPK3PXP');
  });
  afterAll(async () => {
    await h?.close();
    for (const handle of handles) await handle.destroy();
    await shared?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Every sealed value opened with `box`, by table and id. */
  async function openAll(box: ReturnType<typeof createSecretBox>) {
    const opened = new Map<string, string>();
    for (const table of SEALED_TABLES) {
      const rows = (await h.deps.db
        .selectFrom(table as 'access_key')
        .select(['id', 'secret'])
        .where('secret', 'is not', null)
        .execute()) as { id: number; secret: string }[];
      for (const row of rows) opened.set(`${table} ${row.id}`, box.open(row.secret));
    }
    return opened;
  }

  /** Builds a server on the database with only this key. */
  async function serverWith(key: Buffer) {
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-rotate-server-'));
    dirs.push(dataDir);
    const handle = openDb(url);
    handles.push(handle);
    const config = loadConfig({}, { dataDir, dbUrl: url, bcryptCost: 4, secretKey: key.toString('base64') });
    const { app, deps } = await buildApp(config, { db: handle, logger: false });
    await app.close();
    return deps;
  }

  it('refuses a current key that is not the database key, and a value no key opens, changing nothing', async () => {
    await expect(rotateSecrets(h.deps.db, newKey(), newKey())).rejects.toThrow(
      /the current key \(id [0-9a-f]{8}\) is not the database's key/,
    );
    await expect(rotateSecrets(h.deps.db, keyA, keyA)).rejects.toThrow(/the new key is the current key/);

    const stranger = await insertReturningId(h.deps.db, h.deps.dialect, 'access_key', {
      project_id: projectId,
      name: 'sealed elsewhere',
      type: 'login_password',
      secret: createSecretBox(newKey()).seal('{}'),
      owner: '',
      environment_id: null,
    });
    const failed = rotateSecrets(h.deps.db, keyA, newKey());
    await expect(failed).rejects.toThrow(RotationError);
    await expect(failed).rejects.toThrow(
      `open under neither the current nor the new key, so nothing was changed: access_key ${stranger}`,
    );
    await h.deps.db.deleteFrom('access_key').where('id', '=', stranger).execute();
    expect(await rotationState(h.deps.db)).toEqual({
      recorded: secretKeyFingerprint(keyA),
      rotating: undefined,
    });
    expect(await openAll(createSecretBox(keyA))).toEqual(plain);
  });

  it('interrupted after its first batch, leaves every value readable and no server starting; a second run finishes', async () => {
    const keyB = newKey();
    const batches: SealedTable[] = [];
    await expect(
      rotateSecrets(h.deps.db, keyA, keyB, {
        batchSize: 2,
        afterBatch: (table) => {
          batches.push(table);
          throw new Error('killed after the first batch');
        },
      }),
    ).rejects.toThrow('killed after the first batch');
    expect(batches).toEqual(['access_key']);

    // Two values are under the new key now, the rest under the old one: both keys together open them all.
    expect(await openAll(createSecretBox(keyB, keyA))).toEqual(plain);
    await expect(openAll(createSecretBox(keyA))).rejects.toThrow(/another secret key/);
    await expect(serverWith(keyA)).rejects.toThrow(SecretKeyRotationUnfinishedError);
    await expect(serverWith(keyB)).rejects.toThrow(SecretKeyRotationUnfinishedError);
    // Another new key cannot take over the unfinished rotation.
    await expect(rotateSecrets(h.deps.db, keyA, newKey())).rejects.toThrow(
      /an unfinished rotation to another key \(id [0-9a-f]{8}\)/,
    );

    const counts = await rotateSecrets(h.deps.db, keyA, keyB, { batchSize: 2 });
    expect(counts).toEqual({
      access_key: { resealed: 6, already: 2 },
      task: { resealed: 3, already: 0 },
      user_totp: { resealed: 1, already: 0 },
      terraform_state_version: { resealed: 1, already: 0 },
    });
    rotated.push(keyB);
    // Run again with the same keys: the database's part is done.
    expect(await rotateSecrets(h.deps.db, keyA, keyB)).toBeNull();

    // The new key alone opens every value, each in the versioned format; the old key no longer starts a server.
    expect(await openAll(createSecretBox(keyB))).toEqual(plain);
    await expect(serverWith(keyA)).rejects.toThrow(SecretKeyMismatchError);
    const deps = await serverWith(keyB);
    const keys = await deps.db.selectFrom('access_key').selectAll().where('secret', 'is not', null).execute();
    for (const row of keys) {
      expect(Buffer.from(row.secret ?? '', 'base64')[0]).toBe(1);
      const expected = plain.get(`access_key ${row.id}`) ?? '';
      if (row.owner === '') expect(decodeKey(deps.box, row).password).toBe(JSON.parse(expected).password);
      else expect(decodeSecretValue(deps.box, row)).toBe(expected);
    }
  });

  it('holds at most its byte budget of sealed text per batch: one large value at a time', async () => {
    const { recorded } = await rotationState(h.deps.db);
    const current = [keyA, ...rotated].find((k) => secretKeyFingerprint(k) === recorded) as Buffer;
    const next = newKey();
    const perBatch: number[] = [];
    const counts = await rotateSecrets(h.deps.db, current, next, {
      batchBytes: 1,
      afterBatch: (_table, resealed) => {
        perBatch.push(resealed);
      },
    });
    rotated.push(next);
    const total = Object.values(counts ?? {}).reduce((n, c) => n + c.resealed, 0);
    expect(total).toBe(plain.size);
    // Every value alone in its transaction: as many batches as values.
    expect(perBatch).toEqual(Array.from({ length: plain.size }, () => 1));
    expect(await openAll(createSecretBox(next))).toEqual(plain);
  });
});
