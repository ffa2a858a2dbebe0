import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, resourceMatrixTests, type Team } from '../../../test/support/permission-matrix';
import {
  expectCreated,
  expectDeleteRefused,
  expectForeignNotFound,
  expectRejectedOnCreateAndUpdate,
  expectSortedByName,
  expectUpdateThenDelete,
  expectValidationErrors,
  MEGABYTE,
  malformedBodies,
  snapshot,
} from '../../../test/support/resource-team';
import { insertTemplate } from '../../../test/support/task-fixtures';
import { getEnvironmentSecrets } from './environments.service';

describe.each(testDialects())('environments on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Environments');
    other = await createTeam(h, 'Other');
  });
  afterAll(async () => h?.close());

  const body = (over: object = {}) => ({
    name: `env-${Math.random().toString(36).slice(2, 8)}`,
    json: '{"region": "eu"}',
    env: '{"DEBUG": "1"}',
    ...over,
  });
  const createEnv = async (over: object = {}, t = team) => {
    const res = await t.owner.post(`${t.base}/environment`, body(over));
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string; secrets: { id: number; name: string; type: string }[] };
  };

  it('creates, reads, updates and deletes an environment with events', async () => {
    const env = await expectCreated(
      team.manager,
      `${team.base}/environment`,
      { ...body({ name: 'Staging' }), project_id: team.projectId },
      {
        name: 'Staging',
        project_id: team.projectId,
        json: '{"region": "eu"}',
        env: '{"DEBUG": "1"}',
        secrets: [],
      },
    );
    expect((await team.guest.get(`${team.base}/environment/${env.id}`)).json()).toEqual(env);
    await expectUpdateThenDelete(
      h,
      team,
      `${team.base}/environment/${env.id}`,
      {
        body: { id: env.id, name: 'Staging 2', json: '', env: null },
        stored: { name: 'Staging 2', json: '{}', env: '{}' },
      },
      'Environment not found',
      ['Environment Staging 2 deleted', 'Environment Staging 2 updated', 'Environment Staging created'],
    );
  });

  it('stores secrets sealed, answers them without values, and applies create/update/delete', async () => {
    const created = await team.owner.post(
      `${team.base}/environment`,
      body({
        name: 'With secrets',
        secrets: [
          { type: 'var', name: 'db_password', secret: 'var-secret-1', operation: 'create' },
          { type: 'env', name: 'API_TOKEN', secret: 'env-secret-1', operation: 'create' },
        ],
      }),
    );
    expect(created.statusCode).toBe(201);
    const env = created.json();
    expect(env.secrets).toEqual([
      { id: expect.any(Number), name: 'db_password', type: 'var' },
      { id: expect.any(Number), name: 'API_TOKEN', type: 'env' },
    ]);
    expect(created.body).not.toContain('var-secret-1');
    expect(await getEnvironmentSecrets(h.deps, env.id)).toEqual([
      { type: 'var', name: 'db_password', value: 'var-secret-1' },
      { type: 'env', name: 'API_TOKEN', value: 'env-secret-1' },
    ]);
    const rows = await h.deps.db
      .selectFrom('access_key')
      .selectAll()
      .where('environment_id', '=', env.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.owner, r.project_id])).toEqual([
      ['variable', team.projectId],
      ['environment', team.projectId],
    ]);
    for (const row of rows) expect(row.secret).not.toContain('secret-1');

    const [dbPassword, apiToken] = env.secrets;
    const put = await team.owner.put(`${team.base}/environment/${env.id}`, {
      name: 'With secrets',
      secrets: [
        { id: dbPassword.id, type: 'var', name: 'db_password', secret: '', operation: 'update' },
        { id: apiToken.id, type: 'env', name: 'API_TOKEN_2', secret: 'env-secret-2', operation: 'update' },
        { type: 'env', name: 'EXTRA', secret: 'extra-secret', operation: 'create' },
      ],
    });
    expect(put.statusCode).toBe(204);
    expect(await getEnvironmentSecrets(h.deps, env.id)).toEqual([
      { type: 'var', name: 'db_password', value: 'var-secret-1' },
      { type: 'env', name: 'API_TOKEN_2', value: 'env-secret-2' },
      { type: 'env', name: 'EXTRA', value: 'extra-secret' },
    ]);
    const del = await team.owner.put(`${team.base}/environment/${env.id}`, {
      name: 'With secrets',
      secrets: [{ id: dbPassword.id, type: 'var', operation: 'delete' }],
    });
    expect(del.statusCode).toBe(204);
    const got = (await team.guest.get(`${team.base}/environment/${env.id}`)).json();
    expect(got.secrets.map((s: { name: string }) => s.name)).toEqual(['API_TOKEN_2', 'EXTRA']);
    // Secrets are no keys of the key store.
    const keys = (await team.owner.get(`${team.base}/keys`)).json();
    expect(keys.map((k: { name: string }) => k.name)).not.toContain('EXTRA');

    // Deleting the environment removes its secrets.
    expect((await team.owner.del(`${team.base}/environment/${env.id}`)).statusCode).toBe(204);
    const left = await h.deps.db
      .selectFrom('access_key')
      .select('id')
      .where('environment_id', '=', env.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('refuses secret operations on secrets of another environment', async () => {
    const a = await createEnv({ secrets: [{ type: 'env', name: 'A', secret: 'a', operation: 'create' }] });
    const b = await createEnv();
    const foreign = await createEnv(
      { secrets: [{ type: 'env', name: 'F', secret: 'f', operation: 'create' }] },
      other,
    );
    const before = await snapshot(h);
    for (const [target, id] of [
      [b.id, a.secrets[0]!.id],
      [b.id, foreign.secrets[0]!.id],
    ] as const) {
      for (const operation of ['update', 'delete']) {
        const res = await team.owner.put(`${team.base}/environment/${target}`, {
          name: 'B',
          secrets: [{ id, type: 'env', name: 'X', secret: 'x', operation }],
        });
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe(`Secret ${id} does not belong to this environment`);
      }
    }
    const post = await team.owner.post(
      `${team.base}/environment`,
      body({ secrets: [{ id: a.secrets[0]!.id, type: 'env', name: 'X', operation: 'update' }] }),
    );
    expect(post.statusCode).toBe(400);
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses two secrets of one name and type in an environment, and changes nothing', async () => {
    const env = await createEnv({
      secrets: [{ type: 'env', name: 'TOKEN', secret: 'a', operation: 'create' }],
    });
    const before = await snapshot(h);
    const twice = { type: 'env', name: 'TOKEN', secret: 'b', operation: 'create' };
    for (const res of [
      await team.owner.put(`${team.base}/environment/${env.id}`, { name: env.name, secrets: [twice] }),
      await team.owner.post(`${team.base}/environment`, body({ secrets: [twice, twice] })),
      await team.owner.put(`${team.base}/environment/${env.id}`, {
        name: env.name,
        secrets: [
          { ...twice, name: 'OTHER' },
          { id: env.secrets[0]!.id, ...twice, name: 'OTHER', operation: 'update' },
        ],
      }),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatch(
        /^The environment already has a secret named (TOKEN|OTHER) of type env$/,
      );
    }
    expect(await snapshot(h)).toEqual(before);
    // The same name as a variable is another secret; renaming one frees its name.
    const ok = await team.owner.put(`${team.base}/environment/${env.id}`, {
      name: env.name,
      secrets: [
        { ...twice, type: 'var' },
        { id: env.secrets[0]!.id, type: 'env', name: 'OLD_TOKEN', operation: 'update' },
        twice,
      ],
    });
    expect(ok.statusCode, ok.body).toBe(204);
    const got = (await team.owner.get(`${team.base}/environment/${env.id}`)).json();
    expect(got.secrets.map((s: { name: string; type: string }) => `${s.type}:${s.name}`).sort()).toEqual([
      'env:OLD_TOKEN',
      'env:TOKEN',
      'var:TOKEN',
    ]);
  });

  it('lists environments sorted by name', async () => {
    const t = await createTeam(h, 'Sorted environments');
    for (const name of ['beta', 'Alpha', 'gamma']) await createEnv({ name }, t);
    await expectSortedByName(t.guest, `${t.base}/environment`, ['Alpha', 'beta', 'Empty', 'gamma']);
  });

  it('answers every validation message', async () => {
    const cases: [object, string][] = [
      [body({ name: '' }), 'Name is required'],
      [body({ name: undefined }), 'Name is required'],
      [body({ json: '{not json' }), 'Extra variables must be valid JSON'],
      [body({ json: '[1, 2]' }), 'Extra variables must be a JSON object'],
      [body({ json: '"text"' }), 'Extra variables must be a JSON object'],
      [body({ env: '{"A": ' }), 'Environment variables must be valid JSON'],
      [body({ env: 'null' }), 'Environment variables must be a JSON object'],
      [body({ secrets: [{ type: 'env', name: '', secret: 's', operation: 'create' }] }), 'Name is required'],
      [body({ secrets: [{ type: 'env', name: 'A', operation: 'update' }] }), 'ID is required'],
      [body({ secrets: [{ type: 'env', operation: 'delete' }] }), 'ID is required'],
      [body({ secrets: [{ type: 'file', name: 'A', operation: 'create' }] }), 'Type must be one of var, env'],
      [
        body({ secrets: [{ type: 'env', name: 'A', operation: 'upsert' }] }),
        'Secret operation must be one of create, update, delete',
      ],
      [body({ secrets: 'A=1' }), 'Secrets must be a list'],
      [body({ project_id: other.projectId }), 'Project ID in body and URL are different'],
    ];
    const env = await createEnv();
    await expectValidationErrors(
      h,
      team.owner,
      `${team.base}/environment`,
      `${team.base}/environment/${env.id}`,
      cases,
    );
  });

  it('refuses malformed bodies, wrong types and 1 MB strings without changing anything', async () => {
    const env = await createEnv();
    const bad = [
      ...malformedBodies,
      body({ name: 1 }),
      body({ json: { a: 1 } }),
      body({ env: 5 }),
      body({ secrets: [{ type: 'env', name: 5, secret: 's', operation: 'create' }] }),
      body({ secrets: [{ type: 'env', name: 'A', secret: 5, operation: 'create' }] }),
      body({ secrets: [{ id: 'x', type: 'env', name: 'A', operation: 'update' }] }),
      body({ secrets: [null] }),
      body({ name: MEGABYTE }),
      body({ json: `{"a": "${MEGABYTE}"}` }),
      body({ env: `{"A": "${MEGABYTE}"}` }),
      body({ secrets: [{ type: 'env', name: MEGABYTE, secret: 's', operation: 'create' }] }),
      body({ secrets: [{ type: 'env', name: 'BIG', secret: MEGABYTE, operation: 'create' }] }),
      body({
        secrets: Array.from({ length: 501 }, (_, i) => ({
          type: 'env',
          name: `S${i}`,
          secret: 's',
          operation: 'create',
        })),
      }),
    ];
    await expectRejectedOnCreateAndUpdate(
      h,
      team.owner,
      `${team.base}/environment`,
      `${team.base}/environment/${env.id}`,
      bad,
    );
  });

  it('answers 404 for an environment of another project', async () => {
    const foreign = await createEnv({}, other);
    await expectForeignNotFound(h, team, `${team.base}/environment/${foreign.id}`, body());
  });

  it('lists refs and refuses to delete an environment in use', async () => {
    const env = await createEnv({ name: 'Used environment' });
    await insertTemplate(h.deps, team.projectId, {
      name: 'Uses environment',
      app: '',
      playbook: 'site.yml',
      environment_id: env.id,
    });
    const refs = await team.guest.get(`${team.base}/environment/${env.id}/refs`);
    expect(refs.json().templates).toEqual([{ id: expect.any(Number), name: 'Uses environment' }]);
    await expectDeleteRefused(
      h,
      team.owner,
      `${team.base}/environment/${env.id}`,
      "Can't delete the environment because it is used by the resources below",
      { templates: [{ name: 'Uses environment' }] },
    );
  });

  describe('permission matrix', () => {
    resourceMatrixTests(
      () => team,
      'environment',
      () => createEnv(),
      () => body(),
    );
  });
});
