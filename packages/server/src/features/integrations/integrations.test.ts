import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createSecretKey, expectRefused } from '../../../test/support/integration-kit';
import {
  createTeam,
  expectMatrix,
  readCodes,
  type Team,
  updateProjectCodes,
} from '../../../test/support/permission-matrix';
import { lastEvents, MEGABYTE, malformedBodies, noRefs } from '../../../test/support/resource-team';
import { insertTemplate } from '../../../test/support/task-fixtures';

const matcherBody = {
  name: 'Repository',
  match_type: 'body',
  body_data_type: 'json',
  key: 'repository.full_name',
  method: 'equals',
  value: 'acme/app',
};
const valueBody = {
  name: 'Branch',
  value_source: 'body',
  body_data_type: 'json',
  key: 'ref',
  variable: 'GIT_REF',
};

describe.each(testDialects())('integrations API on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  let templateId: number;
  let otherTemplateId: number;
  let keyId: number;
  let otherKeyId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Hooks');
    other = await createTeam(h, 'Other');
    templateId = await insertTemplate(h.deps, team.projectId, { name: 'Deploy', playbook: 'deploy.sh' });
    otherTemplateId = await insertTemplate(h.deps, other.projectId, {
      name: 'Elsewhere',
      playbook: 'deploy.sh',
    });
    keyId = await createSecretKey(team.owner, team.base, 'hook-secret-1');
    otherKeyId = await createSecretKey(other.owner, other.base, 'hook-secret-2');
  });
  afterAll(async () => h?.close());

  const createIntegration = async (body: object = {}, t = team, tpl = templateId) => {
    const res = await t.owner.post(`${t.base}/integrations`, { name: 'Hook', template_id: tpl, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string };
  };
  /** An integration with one alias, matcher and extracted value. */
  const fixture = async (t = team, tpl = templateId) => {
    const integration = await createIntegration({}, t, tpl);
    const base = `${t.base}/integrations/${integration.id}`;
    const alias = (await t.owner.post(`${base}/aliases`)).json();
    const projectAlias = (await t.owner.post(`${t.base}/integrations/aliases`)).json();
    const matcher = (await t.owner.post(`${base}/matchers`, matcherBody)).json();
    const value = (await t.owner.post(`${base}/values`, valueBody)).json();
    return { integration, base, alias, projectAlias, matcher, value };
  };

  describe('integrations', () => {
    it('creates, lists, reads, updates and deletes an integration with events', async () => {
      const created = await team.owner.post(`${team.base}/integrations`, {
        name: '  GitHub push  ',
        template_id: templateId,
        auth_method: 'github',
        auth_secret_id: keyId,
        project_id: team.projectId,
        task_params: { environment: '{"STAGE":"prod"}', message: 'From GitHub', params: { debug: true } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const integration = created.json();
      expect(integration).toEqual({
        id: expect.any(Number),
        project_id: team.projectId,
        name: 'GitHub push',
        template_id: templateId,
        workflow_id: null,
        auth_method: 'github',
        auth_header: '',
        auth_secret_id: keyId,
        searchable: false,
        task_params: { environment: '{"STAGE":"prod"}', message: 'From GitHub', params: { debug: true } },
      });
      expect(JSON.stringify(integration)).not.toContain('hook-secret-1');
      expect((await lastEvents(h, team.projectId, 1))[0]).toEqual({
        object_type: 'integration',
        object_id: integration.id,
        description: 'Integration GitHub push created',
      });

      const list = await team.guest.get(`${team.base}/integrations`);
      expect(list.statusCode).toBe(200);
      expect(list.json()).toContainEqual(integration);
      expect((await team.guest.get(`${team.base}/integrations/${integration.id}`)).json()).toEqual(
        integration,
      );

      const updated = await team.owner.put(`${team.base}/integrations/${integration.id}`, {
        id: integration.id,
        name: 'Token hook',
        template_id: templateId,
        auth_method: 'token',
        auth_secret_id: keyId,
        auth_header: 'X-Deploy-Token',
        searchable: true,
      });
      expect(updated.statusCode, updated.body).toBe(204);
      expect((await team.owner.get(`${team.base}/integrations/${integration.id}`)).json()).toEqual({
        ...integration,
        name: 'Token hook',
        auth_method: 'token',
        auth_header: 'X-Deploy-Token',
        searchable: true,
        task_params: {},
      });
      expect((await lastEvents(h, team.projectId, 1))[0]?.description).toBe('Integration Token hook updated');

      // Switching the method off drops the secret and header.
      await team.owner.put(`${team.base}/integrations/${integration.id}`, {
        name: 'Open hook',
        template_id: templateId,
        auth_method: '',
        auth_secret_id: keyId,
        auth_header: 'X-Deploy-Token',
      });
      expect((await team.owner.get(`${team.base}/integrations/${integration.id}`)).json()).toMatchObject({
        auth_method: '',
        auth_secret_id: null,
        auth_header: '',
      });

      const refs = await team.guest.get(`${team.base}/integrations/${integration.id}/refs`);
      expect(refs.statusCode).toBe(200);
      expect(refs.json()).toEqual(noRefs);

      const deleted = await team.owner.del(`${team.base}/integrations/${integration.id}`);
      expect(deleted.statusCode).toBe(204);
      expect((await team.owner.get(`${team.base}/integrations/${integration.id}`)).statusCode).toBe(404);
      expect((await lastEvents(h, team.projectId, 1))[0]?.description).toBe('Integration Open hook deleted');
    });

    it('accepts the peer request field `params` and "none" as auth method', async () => {
      const res = await team.owner.post(`${team.base}/integrations`, {
        name: 'Peer',
        template_id: templateId,
        auth_method: 'none',
        params: { git_branch: 'develop', arguments: '["-v"]' },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({
        auth_method: '',
        task_params: { git_branch: 'develop', arguments: '["-v"]' },
      });
    });

    it('deleting an integration deletes its aliases, matchers and values', async () => {
      const f = await fixture();
      expect((await team.owner.del(f.base)).statusCode).toBe(204);
      const db = h.deps.db;
      const id = f.integration.id;
      expect(
        await db.selectFrom('integration_alias').selectAll().where('integration_id', '=', id).execute(),
      ).toEqual([]);
      expect(
        await db.selectFrom('integration_matcher').selectAll().where('integration_id', '=', id).execute(),
      ).toEqual([]);
      expect(
        await db
          .selectFrom('integration_extract_value')
          .selectAll()
          .where('integration_id', '=', id)
          .execute(),
      ).toEqual([]);
      // The project-level alias belongs to the project, not to the integration.
      expect(
        await db.selectFrom('integration_alias').select('id').where('id', '=', f.projectAlias.id).execute(),
      ).toHaveLength(1);
    });

    it('names each missing or wrong field', async () => {
      const cases: [object, string][] = [
        [{ template_id: templateId }, 'Name is required'],
        [{ name: '   ', template_id: templateId }, 'Name is required'],
        [{ name: 'x' }, 'Template is required'],
        [{ name: 'x', template_id: 0 }, 'Template is required'],
        [{ name: 'x', template_id: 'abc' }, 'Template must be a number'],
        [{ name: 'x', template_id: 1.5 }, 'Template must be an integer'],
        [{ name: 'x', template_id: templateId, auth_method: 'github' }, 'Auth secret is required'],
        [
          { name: 'x', template_id: templateId, auth_method: 'hmac', auth_secret_id: keyId },
          'Auth header is required',
        ],
        [
          {
            name: 'x',
            template_id: templateId,
            auth_method: 'token',
            auth_secret_id: keyId,
            auth_header: 'X Bad',
          },
          'Auth header must be a valid HTTP header name',
        ],
        [
          { name: 'x', template_id: templateId, auth_method: 'basic', auth_secret_id: keyId },
          'Auth method must be one of none, github, token, hmac',
        ],
        [{ name: 'x', template_id: templateId, searchable: 'yes' }, 'Searchable must be true or false'],
        [
          { name: 'x', template_id: templateId, task_params: { environment: '{' } },
          'Extra variables must be valid JSON',
        ],
        [
          { name: 'x', template_id: templateId, task_params: { environment: '[1]' } },
          'Extra variables must be a JSON object',
        ],
        [
          { name: 'x', template_id: templateId, task_params: { arguments: '{}' } },
          'CLI args must be a JSON array',
        ],
        [{ name: 'x', template_id: templateId, task_params: 'x' }, 'Task params must be an object'],
        [{ name: MEGABYTE, template_id: templateId }, 'Name must be at most 255 characters'],
        [
          { name: 'x', template_id: otherTemplateId },
          `Template ${otherTemplateId} does not exist in this project`,
        ],
        [{ name: 'x', template_id: 999_999 }, 'Template 999999 does not exist in this project'],
        [
          { name: 'x', template_id: templateId, auth_method: 'github', auth_secret_id: otherKeyId },
          `Auth secret ${otherKeyId} does not exist in this project`,
        ],
      ];
      const integration = await createIntegration();
      for (const [body, message] of cases) {
        for (const [method, url] of [
          ['POST', `${team.base}/integrations`],
          ['PUT', `${team.base}/integrations/${integration.id}`],
        ] as const) {
          const res = await team.owner.request(method, url, body);
          expect(res.statusCode, `${method} ${JSON.stringify(body).slice(0, 100)}`).toBe(400);
          expect(res.json().error).toBe(message);
        }
      }
    });

    it('refuses a key that is not a login/password key and an inventory of another project', async () => {
      const noneKey = await h.deps.db
        .selectFrom('access_key')
        .select('id')
        .where('project_id', '=', team.projectId)
        .where('type', '=', 'none')
        .executeTakeFirstOrThrow();
      const res = await team.owner.post(`${team.base}/integrations`, {
        name: 'x',
        template_id: templateId,
        auth_method: 'github',
        auth_secret_id: noneKey.id,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('Auth secret must be a login_password key');
      const inv = await team.owner.post(`${team.base}/integrations`, {
        name: 'x',
        template_id: templateId,
        task_params: { inventory_id: 999_999 },
      });
      expect(inv.statusCode).toBe(400);
      expect(inv.json().error).toBe('Inventory 999999 does not exist in this project');
    });

    it('refuses malformed bodies, wrong types and 1 MB strings and changes nothing', async () => {
      const integration = await createIntegration();
      const bad = [
        ...malformedBodies,
        { name: 42, template_id: templateId },
        {
          name: 'x',
          template_id: templateId,
          auth_header: MEGABYTE,
          auth_method: 'token',
          auth_secret_id: keyId,
        },
        { name: 'x', template_id: templateId, task_params: { environment: `{"a":"${MEGABYTE}"}` } },
        { name: 'x', template_id: templateId, task_params: { params: { big: MEGABYTE } } },
        { name: 'x', template_id: templateId, task_params: { message: MEGABYTE } },
        { name: 'x', template_id: 2_147_483_648 },
        { name: 'x', template_id: templateId, auth_secret_id: -1 },
      ];
      await expectRefused(h, team.owner, 'POST', `${team.base}/integrations`, bad);
      await expectRefused(h, team.owner, 'PUT', `${team.base}/integrations/${integration.id}`, bad);
    });

    it('answers 404 for an unknown id or one of another project, 400 for a bad id', async () => {
      const foreign = await fixture(other, otherTemplateId);
      const body = { name: 'x', template_id: templateId };
      const paths = [
        `/integrations/${foreign.integration.id}`,
        `/integrations/${foreign.integration.id}/refs`,
        `/integrations/${foreign.integration.id}/aliases`,
        `/integrations/${foreign.integration.id}/matchers`,
        `/integrations/${foreign.integration.id}/values`,
        '/integrations/999999',
      ];
      for (const path of paths) {
        const res = await team.owner.get(`${team.base}${path}`);
        expect(res.statusCode, path).toBe(404);
        expect(res.json().error).toBe('Integration not found');
      }
      const writes: [string, string, object | undefined][] = [
        ['PUT', `/integrations/${foreign.integration.id}`, body],
        ['DELETE', `/integrations/${foreign.integration.id}`, undefined],
        ['POST', `/integrations/${foreign.integration.id}/aliases`, {}],
        ['DELETE', `/integrations/${foreign.integration.id}/aliases/${foreign.alias.id}`, undefined],
        ['POST', `/integrations/${foreign.integration.id}/matchers`, matcherBody],
        ['PUT', `/integrations/${foreign.integration.id}/matchers/${foreign.matcher.id}`, matcherBody],
        ['DELETE', `/integrations/${foreign.integration.id}/matchers/${foreign.matcher.id}`, undefined],
        ['POST', `/integrations/${foreign.integration.id}/values`, valueBody],
        ['PUT', `/integrations/${foreign.integration.id}/values/${foreign.value.id}`, valueBody],
        ['DELETE', `/integrations/${foreign.integration.id}/values/${foreign.value.id}`, undefined],
      ];
      for (const [method, path, payload] of writes) {
        const res = await team.owner.request(method as 'PUT', `${team.base}${path}`, payload);
        expect(res.statusCode, `${method} ${path}`).toBe(404);
        expect(res.json().error).toBe('Integration not found');
      }
      // The project-level alias of another project is not ours to delete.
      const alias = await team.owner.del(`${team.base}/integrations/aliases/${foreign.projectAlias.id}`);
      expect(alias.statusCode).toBe(404);
      expect(alias.json().error).toBe('Alias not found');

      // Our integration with another integration's child ids.
      const mine = await fixture();
      const crossed: [string, string, object | undefined, string][] = [
        ['PUT', `${mine.base}/matchers/${foreign.matcher.id}`, matcherBody, 'Matcher not found'],
        ['DELETE', `${mine.base}/matchers/${foreign.matcher.id}`, undefined, 'Matcher not found'],
        ['PUT', `${mine.base}/values/${foreign.value.id}`, valueBody, 'Extracted value not found'],
        ['DELETE', `${mine.base}/values/${foreign.value.id}`, undefined, 'Extracted value not found'],
        ['DELETE', `${mine.base}/aliases/${foreign.alias.id}`, undefined, 'Alias not found'],
      ];
      for (const [method, url, payload, message] of crossed) {
        const res = await team.owner.request(method as 'PUT', url, payload);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json().error).toBe(message);
      }
      const bad = await team.owner.get(`${team.base}/integrations/abc`);
      expect(bad.statusCode).toBe(400);
      expect(
        (await team.owner.get(`${team.base}/integrations/${mine.integration.id}/matchers/x`)).statusCode,
      ).toBe(404);
      // Nothing of the other project changed.
      expect((await other.owner.get(`${foreign.base}/matchers`)).json()).toEqual([foreign.matcher]);
      expect((await other.owner.get(`${foreign.base}/values`)).json()).toEqual([foreign.value]);
      expect((await other.owner.get(`${foreign.base}/aliases`)).json()).toEqual([foreign.alias]);
    });
  });

  describe('aliases', () => {
    it('creates random URL-safe project and integration aliases with their URL', async () => {
      const integration = await createIntegration();
      const project = await team.owner.post(`${team.base}/integrations/aliases`);
      expect(project.statusCode, project.body).toBe(201);
      const a = project.json();
      expect(a).toEqual({
        id: expect.any(Number),
        project_id: team.projectId,
        integration_id: null,
        alias: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        url: `http://localhost:80/api/integrations/${a.alias}`,
      });
      const own = await team.owner.post(`${team.base}/integrations/${integration.id}/aliases`);
      expect(own.statusCode).toBe(201);
      const b = own.json();
      expect(b).toMatchObject({
        integration_id: integration.id,
        alias: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
      });
      expect(b.alias).not.toBe(a.alias);
      expect((await lastEvents(h, team.projectId, 1))[0]).toMatchObject({
        object_type: 'integration_alias',
        object_id: b.id,
      });

      const projectList = (await team.task_runner.get(`${team.base}/integrations/aliases`)).json();
      expect(projectList).toContainEqual(a);
      expect(projectList.every((x: { integration_id: number | null }) => x.integration_id === null)).toBe(
        true,
      );
      expect(
        (await team.task_runner.get(`${team.base}/integrations/${integration.id}/aliases`)).json(),
      ).toEqual([b]);

      expect(
        (await team.owner.del(`${team.base}/integrations/${integration.id}/aliases/${b.id}`)).statusCode,
      ).toBe(204);
      expect((await team.owner.get(`${team.base}/integrations/${integration.id}/aliases`)).json()).toEqual(
        [],
      );
      expect((await team.owner.del(`${team.base}/integrations/aliases/${a.id}`)).statusCode).toBe(204);
      expect((await team.owner.get(`${team.base}/integrations/aliases`)).json()).not.toContainEqual(a);
      expect((await team.owner.del(`${team.base}/integrations/aliases/${a.id}`)).statusCode).toBe(404);
    });

    it('shows alias URLs only to members who may run tasks', async () => {
      const integration = await createIntegration();
      const own = (await team.owner.post(`${team.base}/integrations/${integration.id}/aliases`)).json();
      const project = (await team.owner.post(`${team.base}/integrations/aliases`)).json();
      for (const url of [
        `${team.base}/integrations/aliases`,
        `${team.base}/integrations/${integration.id}/aliases`,
      ]) {
        for (const caller of ['admin', 'owner', 'manager', 'task_runner'] as const) {
          const res = await team[caller].get(url);
          expect(res.statusCode, `${caller} ${url}`).toBe(200);
          expect(res.json(), `${caller} ${url}`).toContainEqual(
            url.endsWith('/integrations/aliases') ? project : own,
          );
        }
        const guest = await team.guest.get(url);
        expect(guest.statusCode, url).toBe(403);
        expect(guest.body).not.toContain(own.alias);
        expect(guest.body).not.toContain(project.alias);
      }
      // The integration itself stays readable, and says whether a request must prove its sender.
      const read = await team.guest.get(`${team.base}/integrations/${integration.id}`);
      expect(read.statusCode).toBe(200);
      expect(read.body).not.toContain(own.alias);
    });

    it('uses the configured web root in alias URLs', async () => {
      const rooted = await createHarness(dialect, { webRoot: 'https://ci.example.test/signalbox/' });
      try {
        const owner = await rooted.userClient({ can_create_project: true });
        const { projectId } = await rooted.projectWithTeam(owner);
        const res = await owner.post(`/api/project/${projectId}/integrations/aliases`);
        expect(res.json().url).toBe(`https://ci.example.test/signalbox/api/integrations/${res.json().alias}`);
      } finally {
        await rooted.close();
      }
    });
  });

  describe('matchers', () => {
    it('creates, lists, updates and deletes matchers', async () => {
      const integration = await createIntegration();
      const base = `${team.base}/integrations/${integration.id}/matchers`;
      const created = await team.owner.post(base, { ...matcherBody, integration_id: integration.id });
      expect(created.statusCode, created.body).toBe(200);
      const matcher = created.json();
      expect(matcher).toEqual({ id: expect.any(Number), integration_id: integration.id, ...matcherBody });
      expect((await team.guest.get(base)).json()).toEqual([matcher]);
      expect((await lastEvents(h, team.projectId, 1))[0]).toEqual({
        object_type: 'integration_matcher',
        object_id: matcher.id,
        description: 'Matcher Repository of integration Hook created',
      });
      const change = {
        ...matcherBody,
        match_type: 'header',
        key: 'X-GitHub-Event',
        method: 'contains',
        value: 'pu',
      };
      expect((await team.owner.put(`${base}/${matcher.id}`, change)).statusCode).toBe(204);
      expect((await team.guest.get(base)).json()).toEqual([{ ...matcher, ...change }]);
      expect((await team.owner.del(`${base}/${matcher.id}`)).statusCode).toBe(204);
      expect((await team.guest.get(base)).json()).toEqual([]);
      expect((await team.owner.del(`${base}/${matcher.id}`)).statusCode).toBe(404);
      expect((await lastEvents(h, team.projectId, 1))[0]?.description).toBe(
        'Matcher Repository of integration Hook deleted',
      );
    });

    it('names each missing or wrong field and refuses bad bodies without changes', async () => {
      const integration = await createIntegration();
      const base = `${team.base}/integrations/${integration.id}/matchers`;
      const matcher = (await team.owner.post(base, matcherBody)).json();
      const without = (field: string) =>
        Object.fromEntries(Object.entries(matcherBody).filter(([k]) => k !== field));
      const cases: [object, string][] = [
        [without('name'), 'Name is required'],
        [without('match_type'), 'Match source is required'],
        [without('body_data_type'), 'Body data format is required'],
        [without('key'), 'Key is required'],
        [without('method'), 'Comparison method is required'],
        [without('value'), 'Value is required'],
        [{ ...matcherBody, value: '' }, 'Value is required'],
        [{ ...matcherBody, match_type: 'query' }, 'Match source must be one of body, header'],
        [{ ...matcherBody, body_data_type: 'xml' }, 'Body data format must be one of json, string'],
        [{ ...matcherBody, method: 'regex' }, 'Comparison method must be one of equals, unequals, contains'],
        [{ ...matcherBody, value: MEGABYTE }, 'Value must be at most 1000 characters'],
        [{ ...matcherBody, key: MEGABYTE }, 'Key must be at most 255 characters'],
      ];
      for (const [body, message] of cases) {
        for (const [method, url] of [
          ['POST', base],
          ['PUT', `${base}/${matcher.id}`],
        ] as const) {
          const res = await team.owner.request(method, url, body);
          expect(res.statusCode, `${method} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
          expect(res.json().error).toBe(message);
        }
      }
      const bad = [...malformedBodies, { ...matcherBody, name: 7 }, { ...matcherBody, value: 1 }];
      await expectRefused(h, team.owner, 'POST', base, bad);
      await expectRefused(h, team.owner, 'PUT', `${base}/${matcher.id}`, bad);
    });
  });

  describe('extracted values', () => {
    it('creates, lists, updates and deletes values; variable type defaults to environment', async () => {
      const integration = await createIntegration();
      const base = `${team.base}/integrations/${integration.id}/values`;
      const created = await team.owner.post(base, { ...valueBody, integration_id: integration.id });
      expect(created.statusCode, created.body).toBe(201);
      const value = created.json();
      expect(value).toEqual({
        id: expect.any(Number),
        integration_id: integration.id,
        ...valueBody,
        variable_type: 'environment',
      });
      expect((await team.guest.get(base)).json()).toEqual([value]);
      expect((await lastEvents(h, team.projectId, 1))[0]).toEqual({
        object_type: 'integration_extract_value',
        object_id: value.id,
        description: 'Extracted value Branch of integration Hook created',
      });
      const change = {
        ...valueBody,
        value_source: 'header',
        key: 'X-GitHub-Event',
        variable: 'event',
        variable_type: 'task',
      };
      expect((await team.owner.put(`${base}/${value.id}`, change)).statusCode).toBe(204);
      expect((await team.guest.get(base)).json()).toEqual([{ ...value, ...change }]);
      expect((await team.owner.del(`${base}/${value.id}`)).statusCode).toBe(204);
      expect((await team.guest.get(base)).json()).toEqual([]);
      expect((await team.owner.del(`${base}/${value.id}`)).statusCode).toBe(404);
    });

    it('names each missing or wrong field and refuses bad bodies without changes', async () => {
      const integration = await createIntegration();
      const base = `${team.base}/integrations/${integration.id}/values`;
      const value = (await team.owner.post(base, valueBody)).json();
      const without = (field: string) =>
        Object.fromEntries(Object.entries(valueBody).filter(([k]) => k !== field));
      const cases: [object, string][] = [
        [without('name'), 'Name is required'],
        [without('value_source'), 'Value source is required'],
        [without('body_data_type'), 'Body data format is required'],
        [without('key'), 'Key is required'],
        [without('variable'), 'Variable is required'],
        [{ ...valueBody, value_source: 'query' }, 'Value source must be one of body, header'],
        [{ ...valueBody, body_data_type: 'xml' }, 'Body data format must be one of json, string'],
        [{ ...valueBody, variable_type: 'secret' }, 'Variable type must be one of environment, task'],
        [{ ...valueBody, variable: MEGABYTE }, 'Variable must be at most 255 characters'],
      ];
      for (const [body, message] of cases) {
        for (const [method, url] of [
          ['POST', base],
          ['PUT', `${base}/${value.id}`],
        ] as const) {
          const res = await team.owner.request(method, url, body);
          expect(res.statusCode, `${method} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
          expect(res.json().error).toBe(message);
        }
      }
      const bad = [...malformedBodies, { ...valueBody, key: [] }, { ...valueBody, integration_id: 'x' }];
      await expectRefused(h, team.owner, 'POST', base, bad);
      await expectRefused(h, team.owner, 'PUT', `${base}/${value.id}`, bad);
    });
  });

  describe('permissions', () => {
    it('lets every member read and nobody else, aliases only members who may run tasks', async () => {
      const f = await fixture();
      for (const path of [
        '/integrations',
        `/integrations/${f.integration.id}`,
        `/integrations/${f.integration.id}/refs`,
        `/integrations/${f.integration.id}/matchers`,
        `/integrations/${f.integration.id}/values`,
      ]) {
        await expectMatrix(team, readCodes(), (c) => c.get(`${team.base}${path}`));
      }
      // Alias URLs start tasks: guests may not read them.
      for (const path of ['/integrations/aliases', `/integrations/${f.integration.id}/aliases`]) {
        await expectMatrix(team, { ...readCodes(), guest: 403 }, (c) => c.get(`${team.base}${path}`));
      }
    });

    it('needs updateProject to create, change or delete an integration', async () => {
      await expectMatrix(team, updateProjectCodes(201), (c) =>
        c.post(`${team.base}/integrations`, { name: 'Matrix', template_id: templateId }),
      );
      const target = await createIntegration();
      await expectMatrix(team, updateProjectCodes(204), (c) =>
        c.put(`${team.base}/integrations/${target.id}`, { name: 'Matrix 2', template_id: templateId }),
      );
      await expectMatrix(team, updateProjectCodes(204), async (c, caller) => {
        const victim = await createIntegration({ name: `Victim ${caller}` });
        const res = await c.del(`${team.base}/integrations/${victim.id}`);
        const left = await h.deps.db
          .selectFrom('integration')
          .select('id')
          .where('id', '=', victim.id)
          .execute();
        expect(left).toHaveLength(res.statusCode === 204 ? 0 : 1);
        return res;
      });
    });

    it('needs updateProject to create or delete aliases', async () => {
      const f = await fixture();
      await expectMatrix(team, updateProjectCodes(201), (c) => c.post(`${team.base}/integrations/aliases`));
      await expectMatrix(team, updateProjectCodes(201), (c) => c.post(`${f.base}/aliases`));
      await expectMatrix(team, updateProjectCodes(204), async (c) => {
        const alias = (await team.owner.post(`${team.base}/integrations/aliases`)).json();
        return c.del(`${team.base}/integrations/aliases/${alias.id}`);
      });
      await expectMatrix(team, updateProjectCodes(204), async (c) => {
        const alias = (await team.owner.post(`${f.base}/aliases`)).json();
        return c.del(`${f.base}/aliases/${alias.id}`);
      });
    });

    it('needs updateProject to change matchers and extracted values', async () => {
      const f = await fixture();
      await expectMatrix(team, updateProjectCodes(200), (c) => c.post(`${f.base}/matchers`, matcherBody));
      await expectMatrix(team, updateProjectCodes(204), (c) =>
        c.put(`${f.base}/matchers/${f.matcher.id}`, { ...matcherBody, value: 'changed' }),
      );
      await expectMatrix(team, updateProjectCodes(204), async (c) => {
        const m = (await team.owner.post(`${f.base}/matchers`, matcherBody)).json();
        return c.del(`${f.base}/matchers/${m.id}`);
      });
      await expectMatrix(team, updateProjectCodes(201), (c) => c.post(`${f.base}/values`, valueBody));
      await expectMatrix(team, updateProjectCodes(204), (c) =>
        c.put(`${f.base}/values/${f.value.id}`, { ...valueBody, variable: 'CHANGED' }),
      );
      await expectMatrix(team, updateProjectCodes(204), async (c) => {
        const v = (await team.owner.post(`${f.base}/values`, valueBody)).json();
        return c.del(`${f.base}/values/${v.id}`);
      });
    });

    it('answers 404 for an unknown project and 401 before anything for anonymous callers', async () => {
      expect((await team.admin.get('/api/project/999999/integrations')).statusCode).toBe(404);
      expect((await team.anonymous.get('/api/project/999999/integrations')).statusCode).toBe(401);
    });
  });
});
