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
  lastEvents,
  MEGABYTE,
  malformedBodies,
  snapshot,
} from '../../../test/support/resource-team';
import { insertTemplate } from '../../../test/support/task-fixtures';

describe.each(testDialects())('inventory on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  let keyId: number;
  let becomeId: number;
  let repoId: number;
  let otherKeyId: number;
  let otherRepoId: number;

  const setupResources = async (t: Team) => {
    const key = (
      await t.owner.post(`${t.base}/keys`, {
        name: 'Login',
        type: 'login_password',
        login_password: { login: 'ansible', password: 'pw' },
      })
    ).json().id as number;
    const repo = (
      await t.owner.post(`${t.base}/repositories`, {
        name: 'Hosts',
        git_url: 'https://example.test/hosts.git',
        git_branch: 'main',
        ssh_key_id: key,
      })
    ).json().id as number;
    return { key, repo };
  };

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Inventory');
    other = await createTeam(h, 'Other');
    ({ key: keyId, repo: repoId } = await setupResources(team));
    becomeId = (
      await team.owner.post(`${team.base}/keys`, {
        name: 'Sudo',
        type: 'login_password',
        login_password: { login: 'root', password: 'pw' },
      })
    ).json().id;
    ({ key: otherKeyId, repo: otherRepoId } = await setupResources(other));
  });
  afterAll(async () => h?.close());

  const body = (over: object = {}) => ({
    name: `inv-${Math.random().toString(36).slice(2, 8)}`,
    type: 'static',
    inventory: '[web]\nhost1\n',
    ssh_key_id: keyId,
    ...over,
  });
  const createInv = async (over: object = {}) => {
    const res = await team.owner.post(`${team.base}/inventory`, body(over));
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string; ssh_key_id: number };
  };

  it('creates, reads, updates and deletes an inventory with events', async () => {
    const inv = await expectCreated(
      team.manager,
      `${team.base}/inventory`,
      {
        ...body({ name: 'Web', become_key_id: becomeId, repository_id: repoId }),
        project_id: team.projectId,
        runner_tag: ' linux ',
      },
      {
        name: 'Web',
        project_id: team.projectId,
        type: 'static',
        inventory: '[web]\nhost1\n',
        ssh_key_id: keyId,
        become_key_id: becomeId,
        repository_id: repoId,
        runner_tag: 'linux',
      },
    );
    expect((await team.guest.get(`${team.base}/inventory/${inv.id}`)).json()).toEqual(inv);
    await expectUpdateThenDelete(
      h,
      team,
      `${team.base}/inventory/${inv.id}`,
      {
        body: {
          id: inv.id,
          name: 'Web file',
          type: 'file',
          inventory: ' inventories/web.ini ',
          ssh_key_id: keyId,
        },
        stored: {
          name: 'Web file',
          type: 'file',
          inventory: 'inventories/web.ini',
          become_key_id: null,
          repository_id: null,
          runner_tag: null,
        },
      },
      'Inventory not found',
      ['Inventory Web file deleted', 'Inventory Web file updated', 'Inventory Web created'],
    );
  });

  it('keeps a trimmed runner tag, empty means none, and refuses a bad one', async () => {
    const res = await team.owner.post(`${team.base}/inventory`, body({ runner_tag: '' }));
    expect(res.json().runner_tag).toBeNull();
    for (const [runner_tag, error] of [
      ['x'.repeat(65), 'Runner tag must be at most 64 characters'],
      ['bad\ttag', 'Runner tag must not contain control characters'],
      [['list'], 'Runner tag must be a string'],
    ]) {
      const bad = await team.owner.post(`${team.base}/inventory`, body({ runner_tag }));
      expect(bad.statusCode, bad.body).toBe(400);
      expect(bad.json().error).toBe(error);
    }
  });

  it('accepts valid YAML for static-yaml and refuses broken YAML', async () => {
    await createInv({
      type: 'static-yaml',
      inventory: 'all:\n  hosts:\n    web1:\n      ansible_host: 10.0.0.1\n',
    });
    await createInv({ type: 'static-yaml', inventory: '' });
    const before = await snapshot(h);
    for (const inventory of ['all:\n  hosts: [a, b\n', 'a: b: c', 'key: "unterminated']) {
      const res = await team.owner.post(`${team.base}/inventory`, body({ type: 'static-yaml', inventory }));
      expect(res.statusCode, inventory).toBe(400);
      expect(res.json().error).toBe('Inventory must be valid YAML');
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('creates the None key for a workspace inventory when the project has none, and uses it', async () => {
    const t = await createTeam(h, 'Workspaces');
    // The project starts with a None key; remove it to see the inventory create one.
    await h.deps.db.deleteFrom('access_key').where('project_id', '=', t.projectId).execute();
    const tf = await t.owner.post(`${t.base}/inventory`, {
      name: 'Prod workspace',
      type: 'terraform-workspace',
      inventory: 'prod',
      ssh_key_id: 123456,
    });
    expect(tf.statusCode, tf.body).toBe(201);
    const keys = (await t.owner.get(`${t.base}/keys`)).json();
    expect(keys).toEqual([
      { id: expect.any(Number), name: 'None', type: 'none', project_id: t.projectId, has_secret: false },
    ]);
    expect(tf.json()).toMatchObject({
      type: 'terraform-workspace',
      inventory: 'prod',
      ssh_key_id: keys[0].id,
    });
    const tofu = await t.owner.post(`${t.base}/inventory`, {
      name: 'Tofu workspace',
      type: 'tofu-workspace',
      inventory: 'default',
    });
    expect(tofu.statusCode).toBe(201);
    expect(tofu.json()).toMatchObject({ type: 'tofu-workspace', ssh_key_id: keys[0].id });
    expect((await t.owner.get(`${t.base}/keys`)).json()).toHaveLength(1);
    expect((await lastEvents(h, t.projectId, 3)).map((e) => e.description)).toEqual([
      'Inventory Tofu workspace created',
      'Inventory Prod workspace created',
      'Access key None created',
    ]);

    // Turning a static inventory into a workspace forces the None key too.
    const k = (await t.owner.post(`${t.base}/keys`, { name: 'Other', type: 'none' })).json().id;
    const inv = (
      await t.owner.post(`${t.base}/inventory`, {
        name: 'Static',
        type: 'static',
        inventory: '',
        ssh_key_id: k,
      })
    ).json();
    expect(
      (
        await t.owner.put(`${t.base}/inventory/${inv.id}`, {
          name: 'Static',
          type: 'terraform-workspace',
          inventory: 'dev',
          ssh_key_id: k,
        })
      ).statusCode,
    ).toBe(204);
    expect((await t.owner.get(`${t.base}/inventory/${inv.id}`)).json().ssh_key_id).toBe(keys[0].id);
  });

  it('lists inventories sorted by name', async () => {
    const t = await createTeam(h, 'Sorted inventories');
    const k = (await t.owner.post(`${t.base}/keys`, { name: 'k', type: 'none' })).json().id;
    for (const name of ['beta', 'Alpha', 'gamma'])
      await t.owner.post(`${t.base}/inventory`, { name, type: 'static', ssh_key_id: k });
    await expectSortedByName(t.guest, `${t.base}/inventory`, ['Alpha', 'beta', 'gamma']);
  });

  it('answers every validation message', async () => {
    const cases: [object, string][] = [
      [body({ name: '' }), 'Name is required'],
      [body({ name: undefined }), 'Name is required'],
      [body({ type: undefined }), 'Type is required'],
      [
        body({ type: 'ini' }),
        'Type must be one of static, static-yaml, file, terraform-workspace, tofu-workspace, terragrunt-workspace',
      ],
      [body({ ssh_key_id: undefined }), 'User credentials is required'],
      [body({ ssh_key_id: 0 }), 'User credentials is required'],
      [body({ type: 'file', inventory: '' }), 'Inventory is required'],
      [body({ type: 'file', inventory: '   ' }), 'Inventory is required'],
      [body({ type: 'terraform-workspace', inventory: '' }), 'Inventory is required'],
      [body({ type: 'tofu-workspace', inventory: undefined }), 'Inventory is required'],
      [body({ ssh_key_id: otherKeyId }), `Access key ${otherKeyId} does not exist in this project`],
      [body({ become_key_id: otherKeyId }), `Access key ${otherKeyId} does not exist in this project`],
      [body({ repository_id: otherRepoId }), `Repository ${otherRepoId} does not exist in this project`],
      [body({ repository_id: 999999 }), 'Repository 999999 does not exist in this project'],
      [body({ project_id: other.projectId }), 'Project ID in body and URL are different'],
    ];
    const inv = await createInv();
    await expectValidationErrors(
      h,
      team.owner,
      `${team.base}/inventory`,
      `${team.base}/inventory/${inv.id}`,
      cases,
      async () => {
        const fields = await team.owner.post(`${team.base}/inventory`, body({ repository_id: otherRepoId }));
        expect(fields.json().fields).toEqual({ repository_id: 'Repository not found' });
      },
    );
  });

  it('refuses malformed bodies, wrong types and 1 MB strings without changing anything', async () => {
    const inv = await createInv();
    const bad = [
      ...malformedBodies,
      body({ name: 1 }),
      body({ type: ['static'] }),
      body({ inventory: 12 }),
      body({ ssh_key_id: '1' }),
      body({ become_key_id: true }),
      body({ repository_id: 1.5 }),
      body({ name: MEGABYTE }),
      body({ inventory: MEGABYTE }),
      body({ type: 'file', inventory: MEGABYTE }),
      body({ type: MEGABYTE }),
    ];
    await expectRejectedOnCreateAndUpdate(
      h,
      team.owner,
      `${team.base}/inventory`,
      `${team.base}/inventory/${inv.id}`,
      bad,
    );
  });

  it('answers 404 for an inventory of another project', async () => {
    const foreign = (
      await other.owner.post(`${other.base}/inventory`, {
        name: 'Foreign',
        type: 'static',
        ssh_key_id: otherKeyId,
      })
    ).json();
    await expectForeignNotFound(h, team, `${team.base}/inventory/${foreign.id}`, body());
  });

  it('lists refs and refuses to delete an inventory in use', async () => {
    const inv = await createInv({ name: 'Used inventory' });
    await insertTemplate(h.deps, team.projectId, {
      name: 'Uses inventory',
      app: '',
      playbook: 'site.yml',
      inventory_id: inv.id,
      repository_id: repoId,
    });
    const refs = await team.guest.get(`${team.base}/inventory/${inv.id}/refs`);
    expect(refs.json().templates).toEqual([{ id: expect.any(Number), name: 'Uses inventory' }]);
    await expectDeleteRefused(
      h,
      team.owner,
      `${team.base}/inventory/${inv.id}`,
      "Can't delete the inventory because it is used by the resources below",
      { templates: [{ name: 'Uses inventory' }] },
    );
    await h.deps.db.deleteFrom('template').where('name', '=', 'Uses inventory').execute();
  });

  it('counts as a user of its keys and repository', async () => {
    const inv = await createInv({ name: 'Key user', become_key_id: becomeId, repository_id: repoId });
    const keyRefs = (await team.guest.get(`${team.base}/keys/${becomeId}/refs`)).json();
    expect(keyRefs.inventories).toContainEqual({ id: inv.id, name: 'Key user' });
    const repoRefs = (await team.guest.get(`${team.base}/repositories/${repoId}/refs`)).json();
    expect(repoRefs.inventories).toContainEqual({ id: inv.id, name: 'Key user' });
  });

  describe('permission matrix', () => {
    resourceMatrixTests(
      () => team,
      'inventory',
      () => createInv(),
      () => body(),
    );
  });
});
