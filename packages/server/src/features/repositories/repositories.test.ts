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

describe.each(testDialects())('repositories on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  let keyId: number;
  let otherKeyId: number;
  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Repos');
    other = await createTeam(h, 'Other');
    keyId = (await team.owner.post(`${team.base}/keys`, { name: 'Git', type: 'none' })).json().id;
    otherKeyId = (await other.owner.post(`${other.base}/keys`, { name: 'Git', type: 'none' })).json().id;
  });
  afterAll(async () => h?.close());

  const body = (over: object = {}) => ({
    name: `repo-${Math.random().toString(36).slice(2, 8)}`,
    git_url: 'https://example.test/app.git',
    git_branch: 'main',
    ssh_key_id: keyId,
    ...over,
  });
  const createRepo = async (over: object = {}, t = team, key = keyId) => {
    const res = await t.owner.post(`${t.base}/repositories`, body({ ssh_key_id: key, ...over }));
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string };
  };

  it('creates, reads, updates and deletes a repository with events', async () => {
    const repo = await expectCreated(
      team.manager,
      `${team.base}/repositories`,
      { ...body({ name: 'App' }), project_id: team.projectId },
      {
        name: 'App',
        project_id: team.projectId,
        git_url: 'https://example.test/app.git',
        git_branch: 'main',
        ssh_key_id: keyId,
      },
    );
    expect((await team.guest.get(`${team.base}/repositories/${repo.id}`)).json()).toEqual(repo);
    await expectUpdateThenDelete(
      h,
      team,
      `${team.base}/repositories/${repo.id}`,
      {
        body: {
          id: repo.id,
          name: 'App local',
          git_url: '/srv/app',
          git_branch: 'ignored',
          ssh_key_id: keyId,
        },
        stored: {
          name: 'App local',
          git_url: '/srv/app',
          git_branch: '',
        },
      },
      'Repository not found',
      ['Repository App local deleted', 'Repository App local updated', 'Repository App created'],
    );
  });

  it('accepts every URL type and ssh without a scheme', async () => {
    for (const git_url of [
      'git://example.test/a.git',
      'file:///srv/a',
      'ssh://git@example.test/a.git',
      'http://example.test/a.git',
      'https://example.test/a.git',
      'git@github.com:org/a.git',
    ]) {
      await createRepo({ git_url });
    }
    const local = await createRepo({ git_url: '/srv/a', git_branch: '' });
    expect((await team.owner.get(`${team.base}/repositories/${local.id}`)).json().git_branch).toBe('');
  });

  it('lists repositories sorted by name', async () => {
    const t = await createTeam(h, 'Sorted repos');
    const k = (await t.owner.post(`${t.base}/keys`, { name: 'k', type: 'none' })).json().id;
    for (const name of ['beta', 'Alpha', 'gamma']) await createRepo({ name }, t, k);
    await expectSortedByName(t.guest, `${t.base}/repositories`, ['Alpha', 'beta', 'gamma']);
    expect((await t.guest.get(`${t.base}/repositories?sort=ssh_key&order=asc`)).json()).toHaveLength(3);
  });

  it('answers every validation message', async () => {
    const cases: [object, string][] = [
      [body({ name: '' }), 'Name is required'],
      [body({ name: undefined }), 'Name is required'],
      [body({ git_url: '' }), 'URL is required'],
      [body({ git_url: undefined }), 'URL is required'],
      [body({ git_url: 'ftp://example.test/a' }), 'Incorrect URL'],
      [body({ git_url: 's3://bucket/a' }), 'Incorrect URL'],
      [body({ git_branch: '' }), 'Branch is required'],
      [body({ git_branch: undefined }), 'Branch is required'],
      [body({ ssh_key_id: undefined }), 'User credentials is required'],
      [body({ ssh_key_id: 0 }), 'User credentials is required'],
      [body({ ssh_key_id: null }), 'User credentials is required'],
      [body({ ssh_key_id: 'abc' }), 'User credentials must be a number'],
      [body({ ssh_key_id: otherKeyId }), `Access key ${otherKeyId} does not exist in this project`],
      [body({ ssh_key_id: 999999 }), 'Access key 999999 does not exist in this project'],
      [body({ project_id: other.projectId }), 'Project ID in body and URL are different'],
    ];
    const repo = await createRepo();
    await expectValidationErrors(
      h,
      team.owner,
      `${team.base}/repositories`,
      `${team.base}/repositories/${repo.id}`,
      cases,
      async () => {
        const foreignKey = await team.owner.post(
          `${team.base}/repositories`,
          body({ ssh_key_id: otherKeyId }),
        );
        expect(foreignKey.json().fields).toEqual({ ssh_key_id: 'Access key not found' });
      },
    );
  });

  it('refuses URLs and branches git would take as options, commands or other transports', async () => {
    const repo = await createRepo();
    const before = await snapshot(h);
    const urls = [
      'ext::sh -c touch% /tmp/signalbox-pwned',
      'fd::7',
      '--upload-pack=touch /tmp/signalbox-pwned',
      '-oProxyCommand=touch /tmp/signalbox-pwned',
      'ssh://-oProxyCommand=touch/app.git',
      'ssh://git@-oProxyCommand=x/app.git',
      'git@-oProxyCommand=x:app.git',
      'example.test:--upload-pack=x',
      'https://example.test/app.git\n--upload-pack=x',
      'https://example.test/a b.git',
      '../repo_1.git',
      'repo_1.git',
    ];
    for (const git_url of urls) {
      for (const res of [
        await team.owner.post(`${team.base}/repositories`, body({ git_url })),
        await team.owner.put(`${team.base}/repositories/${repo.id}`, body({ git_url })),
      ]) {
        expect(res.statusCode, git_url).toBe(400);
        expect(res.json(), git_url).toMatchObject({
          error: 'Incorrect URL',
          fields: { git_url: 'Incorrect URL' },
        });
      }
    }
    // A NUL is refused before the URL is looked at, naming the same field.
    const nul = await team.owner.post(
      `${team.base}/repositories`,
      body({ git_url: 'https://example.test/a\u0000b.git' }),
    );
    expect(nul.statusCode).toBe(400);
    expect(nul.json().fields).toHaveProperty('git_url');
    for (const git_branch of ['--upload-pack=x', '-b', 'ma\nin', 'a..b', 'a b', 'x:y', 'main.lock']) {
      const res = await team.owner.post(`${team.base}/repositories`, body({ git_branch }));
      expect(res.statusCode, git_branch).toBe(400);
      expect(res.json(), git_branch).toMatchObject({
        error: 'Incorrect branch name',
        fields: { git_branch: 'Incorrect branch name' },
      });
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses an environment secret as the access key', async () => {
    const env = await team.owner.post(`${team.base}/environment`, {
      name: 'With secret',
      secrets: [{ type: 'env', name: 'TOKEN', secret: 's', operation: 'create' }],
    });
    expect(env.statusCode).toBe(201);
    const secretId = (await team.owner.get(`${team.base}/environment/${env.json().id}`)).json().secrets[0].id;
    const res = await team.owner.post(`${team.base}/repositories`, body({ ssh_key_id: secretId }));
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe(`Access key ${secretId} does not exist in this project`);
  });

  it('refuses malformed bodies, wrong types and 1 MB strings without changing anything', async () => {
    const repo = await createRepo();
    const bad = [
      ...malformedBodies,
      body({ name: 1 }),
      body({ git_url: ['x'] }),
      body({ git_branch: { b: 1 } }),
      body({ ssh_key_id: 1.5 }),
      body({ ssh_key_id: -1 }),
      body({ ssh_key_id: 2 ** 40 }),
      body({ name: MEGABYTE }),
      body({ git_url: `https://example.test/${MEGABYTE}` }),
      body({ git_branch: MEGABYTE }),
    ];
    await expectRejectedOnCreateAndUpdate(
      h,
      team.owner,
      `${team.base}/repositories`,
      `${team.base}/repositories/${repo.id}`,
      bad,
    );
  });

  it('answers 404 for a repository of another project', async () => {
    const foreign = await createRepo({}, other, otherKeyId);
    await expectForeignNotFound(h, team, `${team.base}/repositories/${foreign.id}`, body());
  });

  it('lists refs and refuses to delete a repository in use', async () => {
    const repo = await createRepo({ name: 'Used repo' });
    await h.deps.db
      .insertInto('inventory')
      .values({
        project_id: team.projectId,
        name: 'Inv from repo',
        type: 'file',
        inventory: 'hosts',
        ssh_key_id: keyId,
        become_key_id: null,
        repository_id: repo.id,
      })
      .execute();
    const refs = await team.guest.get(`${team.base}/repositories/${repo.id}/refs`);
    expect(refs.json().inventories).toEqual([{ id: expect.any(Number), name: 'Inv from repo' }]);
    await expectDeleteRefused(
      h,
      team.owner,
      `${team.base}/repositories/${repo.id}`,
      "Can't delete the repository because it is used by the resources below",
      { inventories: [{ name: 'Inv from repo' }] },
    );
    const keyDel = await team.owner.del(`${team.base}/keys/${keyId}`);
    expect(keyDel.statusCode).toBe(409);
    expect(keyDel.json().refs.repositories.length).toBeGreaterThan(0);
  });

  describe('permission matrix', () => {
    resourceMatrixTests(
      () => team,
      'repositories',
      () => createRepo(),
      () => body(),
    );
  });
});
