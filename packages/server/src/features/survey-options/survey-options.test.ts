import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { emptySurveyVar, type OptionsSource, type TemplateSurveyVar } from '@signalbox/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import {
  insertEnvironment,
  insertInventory,
  insertKey,
  insertRepository,
  insertTemplate,
  taskRow,
} from '../../../test/support/task-fixtures';
import { type AllowPrivate, resolver } from './http-options';
import { clearSurveyHttpCache, resolveSurveyOptions } from './index';

// `rebind.test` exists only for the fetcher's own DNS look-up (as a rebinding name answers once): it answers
// 127.0.0.1. Any second look-up, by the HTTP client, would fail, so a fetch succeeds only on the address checked.
const realLookup = resolver.lookupAll;
beforeAll(() => {
  resolver.lookupAll = async (host) =>
    host === 'rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : realLookup(host);
});
afterAll(() => {
  resolver.lookupAll = realLookup;
});

/** A local JSON server: each path answers as the test needs, and every request is counted by path. */
function startServer() {
  const hits = new Map<string, number>();
  const held: { end(): void }[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const redirect = (to: string) => {
      res.writeHead(302, { location: to });
      res.end();
    };
    switch (path) {
      case '/items':
        return json(200, {
          data: [
            { id: 1, name: 'One', tags: ['a'] },
            { id: 2, name: 'Two', tags: ['b'] },
            { id: 2, name: 'Two again' },
            { name: 'No id' },
          ],
        });
      case '/plain':
        return json(200, ['eu-west', 'us-east', 7, true]);
      case '/auth':
        if (req.headers.authorization === `Basic ${Buffer.from('robot:hunter2-secret').toString('base64')}`)
          return json(200, ['granted']);
        return json(401, { error: 'no' });
      case '/slow':
        // Never answers: the fetch must give up by itself.
        held.push(res);
        return;
      case '/big': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('["');
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        // 2.5 MiB in all, written as the client takes it.
        const pump = () => {
          while (sent < 40) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"]');
        };
        pump();
        return;
      }
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('hello, not JSON');
      case '/to-items':
        return redirect('/items');
      case '/to-loopback':
        return redirect(`http://127.0.0.2:${new URL(base).port}/items`);
      case '/to-metadata':
        return redirect('http://169.254.169.254/latest/meta-data/');
      case '/to-ipv6-loopback':
        return redirect(`http://[::1]:${new URL(base).port}/items`);
      case '/loop':
        return redirect('/loop');
      case '/counted':
        return json(200, [`answer-${hits.get(path)}`]);
      default:
        return json(404, {});
    }
  });
  return new Promise<{ base: string; hits: Map<string, number>; close(): Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        base,
        hits,
        close: () =>
          new Promise<void>((done) => {
            for (const res of held) res.end();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

describe.each(testDialects())('survey options on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  let templateId: number;
  let http: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Survey options');
    other = await createTeam(h, 'Other survey options');
    templateId = await insertTemplate(h.deps, team.projectId, { name: 'Asks' });
    http = await startServer();
  });
  afterAll(async () => {
    await http?.close();
    await h?.close();
  });
  beforeEach(() => clearSurveyHttpCache());

  const choice = (
    source: OptionsSource | null,
    over: Partial<TemplateSurveyVar> = {},
  ): TemplateSurveyVar => ({
    ...emptySurveyVar,
    name: 'pick',
    title: 'Pick',
    type: 'enum',
    options_source: source,
    ...over,
  });
  async function resolve(source: OptionsSource, allow: AllowPrivate = false, template = templateId) {
    const deps = { ...h.deps, config: { ...h.deps.config, surveyHttpAllowPrivate: allow } };
    const out = await resolveSurveyOptions(deps, { projectId: team.projectId, templateId: template }, [
      choice(source),
    ]);
    return out.get('pick');
  }
  const values = (answer: unknown) =>
    (answer as { options: { value: string }[] }).options.map((o) => o.value);
  const httpSource = (
    path: string,
    over: Partial<Extract<OptionsSource, { type: 'http' }>> = {},
  ): OptionsSource => ({
    type: 'http',
    url: path.startsWith('http') ? path : `${http.base}${path}`,
    items_path: '$[*]',
    value_path: '',
    label_path: '',
    key_id: null,
    ...over,
  });

  it('answers fixed values, and only for choice variables', async () => {
    const out = await resolveSurveyOptions(h.deps, { projectId: team.projectId, templateId }, [
      choice(null, { values: [{ name: 'Europe', value: 'eu' }] }),
      { ...emptySurveyVar, name: 'text', title: 'Text' },
    ]);
    expect([...out.entries()]).toEqual([['pick', { options: [{ value: 'eu', label: 'Europe' }] }]]);
  });

  it('offers the hosts and groups of static INI and YAML inventories', async () => {
    const ini = await insertInventory(h.deps, team.projectId, {
      type: 'static',
      inventory: [
        'bastion ansible_host=10.0.0.1',
        '# a comment',
        '[web]',
        'web[01:03].example.com',
        'bastion',
        '[db]',
        'db-a ansible_port=2222',
        '[prod:children]',
        'web',
        'db',
        '[prod:vars]',
        'region=eu',
      ].join('\n'),
    });
    expect(await resolve({ type: 'inventory_hosts', inventory_id: ini })).toEqual({
      options: ['bastion', 'web01.example.com', 'web02.example.com', 'web03.example.com', 'db-a'].map(
        (n) => ({
          value: n,
          label: n,
        }),
      ),
    });
    expect(values(await resolve({ type: 'inventory_groups', inventory_id: ini }))).toEqual([
      'web',
      'db',
      'prod',
    ]);

    const yaml = await insertInventory(h.deps, team.projectId, {
      type: 'static-yaml',
      inventory: [
        'all:',
        '  hosts:',
        '    jump:',
        '  children:',
        '    app:',
        '      hosts:',
        '        app1: {ansible_host: 10.0.0.5}',
        '        app2:',
        '    edge:',
        '      children:',
        '        cdn:',
        '          hosts:',
        '            cdn[1:2]:',
      ].join('\n'),
    });
    expect(values(await resolve({ type: 'inventory_hosts', inventory_id: yaml }))).toEqual([
      'jump',
      'app1',
      'app2',
      'cdn1',
      'cdn2',
    ]);
    expect(values(await resolve({ type: 'inventory_groups', inventory_id: yaml }))).toEqual([
      'app',
      'edge',
      'cdn',
    ]);
  });

  it('answers a coded error for an inventory of another type, a broken one, or of another project', async () => {
    const file = await insertInventory(h.deps, team.projectId, { type: 'file', inventory: 'hosts.ini' });
    expect(await resolve({ type: 'inventory_hosts', inventory_id: file })).toEqual({
      error: { code: 'options_inventory_type', params: { type: 'file' } },
    });
    const broken = await insertInventory(h.deps, team.projectId, {
      type: 'static-yaml',
      name: 'Broken',
      inventory: 'all: [unclosed',
    });
    expect(await resolve({ type: 'inventory_groups', inventory_id: broken })).toEqual({
      error: { code: 'options_inventory_invalid', params: { name: 'Broken' } },
    });
    const foreign = await insertInventory(h.deps, other.projectId, {
      type: 'static',
      inventory: 'secret-host',
    });
    expect(await resolve({ type: 'inventory_hosts', inventory_id: foreign })).toEqual({
      error: { code: 'not_in_project', params: { what: 'inventory', id: foreign } },
    });
  });

  it("offers an option list's entries, not another project's list", async () => {
    const made = await team.owner.post(`${team.base}/option_lists`, {
      name: 'Regions',
      options: [
        { name: 'Europe', value: 'eu' },
        { name: 'America', value: 'us' },
      ],
    });
    expect(made.statusCode).toBe(201);
    expect(await resolve({ type: 'option_list', option_list_id: made.json().id })).toEqual({
      options: [
        { value: 'eu', label: 'Europe' },
        { value: 'us', label: 'America' },
      ],
    });
    const foreign = await other.owner.post(`${other.base}/option_lists`, { name: 'Theirs', options: [] });
    expect(await resolve({ type: 'option_list', option_list_id: foreign.json().id })).toEqual({
      error: { code: 'not_in_project', params: { what: 'option_list', id: foreign.json().id } },
    });
  });

  it("offers a named output of the template's last successful task", async () => {
    const tpl = await insertTemplate(h.deps, team.projectId, { name: 'Builds' });
    const source = (output: string): OptionsSource => ({ type: 'task_outputs', output });
    // No task yet: nothing to offer, and no error.
    expect(await resolve(source('versions'), false, tpl)).toEqual({ options: [] });
    const insert = (status: string, outputs: object | null) =>
      h.deps.db
        .insertInto('task')
        .values(taskRow(team.projectId, tpl, { status, outputs: outputs ? JSON.stringify(outputs) : null }))
        .execute();
    await insert('success', { versions: ['0.9'] });
    await insert('success', { versions: ['1.0', '1.1', 2, '1.0'], latest: '1.1', meta: { a: 1 } });
    await insert('error', { versions: ['broken'] });
    await insert('running', null);
    expect(await resolve(source('versions'), false, tpl)).toEqual({
      options: ['1.0', '1.1', '2'].map((v) => ({ value: v, label: v })),
    });
    expect(values(await resolve(source('latest'), false, tpl))).toEqual(['1.1']);
    expect(values(await resolve(source('meta'), false, tpl))).toEqual(['{"a":1}']);
    expect(await resolve(source('missing'), false, tpl)).toEqual({ options: [] });
    // Another template's tasks are not this one's.
    expect(await resolve(source('versions'))).toEqual({ options: [] });
  });

  it('fetches options over http with JSONPaths for items, values and labels', async () => {
    expect(
      await resolve(
        httpSource('/items', { items_path: '$.data[*]', value_path: 'id', label_path: '$.name' }),
        true,
      ),
    ).toEqual({
      options: [
        { value: '1', label: 'One' },
        { value: '2', label: 'Two' },
      ],
    });
    expect(await resolve(httpSource('/plain'), true)).toEqual({
      options: ['eu-west', 'us-east', '7', 'true'].map((v) => ({ value: v, label: v })),
    });
    expect(
      values(await resolve(httpSource('/items', { items_path: '$.data[*]', value_path: 'tags[0]' }), true)),
    ).toEqual(['a', 'b']);
    // A redirect to the same allowed server is followed.
    expect(
      values(await resolve(httpSource('/to-items', { items_path: '$.data[*]', value_path: 'id' }), true)),
    ).toEqual(['1', '2']);
  });

  it('keeps an answer for a while per URL and key', async () => {
    const first = await resolve(httpSource('/counted'), true);
    const second = await resolve(httpSource('/counted'), true);
    expect(values(first)).toEqual(['answer-1']);
    expect(second).toEqual(first);
    expect(http.hits.get('/counted')).toBe(1);
    clearSurveyHttpCache();
    expect(values(await resolve(httpSource('/counted'), true))).toEqual(['answer-2']);
  });

  it('sends a login_password key as basic auth, never in an answer', async () => {
    const key = await insertKey(h.deps, team.projectId, {
      type: 'login_password',
      secret: { login: 'robot', password: 'hunter2-secret' },
    });
    expect(await resolve(httpSource('/auth', { key_id: key }), true)).toEqual({
      options: [{ value: 'granted', label: 'granted' }],
    });
    const denied = await resolve(httpSource('/auth'), true);
    expect(denied).toEqual({ error: { code: 'options_http_status', params: { status: 401 } } });
    const ssh = await insertKey(h.deps, team.projectId, { type: 'ssh', secret: { private_key: 'k' } });
    const foreign = await insertKey(h.deps, other.projectId, {
      type: 'login_password',
      secret: { login: 'robot', password: 'hunter2-secret' },
    });
    for (const id of [ssh, foreign]) {
      const answer = await resolve(httpSource('/auth', { key_id: id }), true);
      expect(answer).toEqual({ error: { code: 'options_http_key' } });
      expect(JSON.stringify(answer)).not.toContain('hunter2');
    }
  });

  it('refuses loopback addresses unless allowed, and literal internal addresses without connecting', async () => {
    const before = http.hits.get('/plain') ?? 0;
    expect(await resolve(httpSource('/plain'))).toEqual({
      error: { code: 'options_http_refused_address', params: { host: '127.0.0.1' } },
    });
    expect(await resolve(httpSource(`${http.base.replace('127.0.0.1', 'localhost')}/plain`))).toEqual({
      error: { code: 'options_http_refused_address', params: { host: 'localhost' } },
    });
    expect(http.hits.get('/plain') ?? 0).toBe(before);
    for (const [url, host] of [
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['http://[::1]/', '::1'],
      ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
      ['http://10.1.2.3/', '10.1.2.3'],
      ['http://0.0.0.0/', '0.0.0.0'],
      ['http://2130706433/', '127.0.0.1'],
    ] as const) {
      expect(await resolve(httpSource(url)), url).toEqual({
        error: { code: 'options_http_refused_address', params: { host } },
      });
    }
    // Allowed by address: the server itself.
    expect(values(await resolve(httpSource('/plain'), ['127.0.0.1']))).toEqual([
      'eu-west',
      'us-east',
      '7',
      'true',
    ]);
  });

  it('connects to the very address it checked, not to a second DNS answer', async () => {
    const url = `http://rebind.test:${new URL(http.base).port}/plain`;
    expect(values(await resolve(httpSource(url), ['127.0.0.1']))).toEqual([
      'eu-west',
      'us-east',
      '7',
      'true',
    ]);
    expect(await resolve(httpSource(url))).toEqual({
      error: { code: 'options_http_refused_address', params: { host: 'rebind.test' } },
    });
  });

  it('refuses a redirect from an allowed server to an internal address it does not allow', async () => {
    const before = http.hits.get('/items') ?? 0;
    expect(await resolve(httpSource('/to-loopback'), ['127.0.0.1'])).toEqual({
      error: { code: 'options_http_refused_address', params: { host: '127.0.0.2' } },
    });
    expect(await resolve(httpSource('/to-metadata'), ['127.0.0.1'])).toEqual({
      error: { code: 'options_http_refused_address', params: { host: '169.254.169.254' } },
    });
    expect(await resolve(httpSource('/to-ipv6-loopback'), ['127.0.0.1'])).toEqual({
      error: { code: 'options_http_refused_address', params: { host: '::1' } },
    });
    expect(http.hits.get('/items') ?? 0).toBe(before);
    expect(await resolve(httpSource('/loop'), true)).toEqual({
      error: { code: 'options_http_redirects', params: { max: 3 } },
    });
    expect(http.hits.get('/loop')).toBe(4);
  });

  it('refuses other schemes, an answer that is not JSON, and one over 1 MiB', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/x',
      'gopher://x/',
      'http://user:pw@example.com/',
    ])
      expect(await resolve(httpSource(url), true), url).toEqual({ error: { code: 'options_http_bad_url' } });
    expect(await resolve(httpSource('/text'), true)).toEqual({ error: { code: 'options_http_not_json' } });
    expect(await resolve(httpSource('/big'), true)).toEqual({
      error: { code: 'options_http_too_large', params: { max: '1 MiB' } },
    });
    expect(await resolve(httpSource('/missing'), true)).toEqual({
      error: { code: 'options_http_status', params: { status: 404 } },
    });
  });

  it('does not run a script a JSONPath holds', async () => {
    const marker = globalThis as { surveyScriptRan?: boolean };
    marker.surveyScriptRan = false;
    for (const path of [
      '$[?(globalThis.surveyScriptRan = true)]',
      '$[(globalThis.surveyScriptRan = true)]',
    ]) {
      expect(await resolve(httpSource('/plain', { items_path: path }), true), path).toEqual({
        error: { code: 'options_http_bad_path', params: { path } },
      });
    }
    expect(
      await resolve(
        httpSource('/items', {
          items_path: '$.data[*]',
          value_path: '[?(globalThis.surveyScriptRan = true)]',
        }),
        true,
      ),
    ).toEqual({
      error: { code: 'options_http_bad_path', params: { path: '$[?(globalThis.surveyScriptRan = true)]' } },
    });
    expect(marker.surveyScriptRan).toBe(false);
  });

  it('gives up on an answer that does not come within 5 seconds', async () => {
    const started = Date.now();
    expect(await resolve(httpSource('/slow'), true)).toEqual({
      error: { code: 'options_http_timeout', params: { limit: 5 } },
    });
    expect(Date.now() - started).toBeLessThan(9_000);
  }, 15_000);

  it("counts an inventory or key a survey's options come from as used by its template", async () => {
    const inventory = await insertInventory(h.deps, team.projectId, { type: 'static', inventory: 'h1' });
    const key = await insertKey(h.deps, team.projectId, { type: 'login_password', secret: {} });
    const survey = JSON.stringify([
      {
        name: 'host',
        title: 'Host',
        type: 'enum',
        options_source: { type: 'inventory_groups', inventory_id: inventory },
      },
      {
        name: 'item',
        title: 'Item',
        type: 'multiselect',
        options_source: { type: 'http', url: 'https://example.com', key_id: key },
      },
    ]);
    await insertTemplate(h.deps, team.projectId, { name: 'Survey user', survey_vars: survey });
    for (const url of [`${team.base}/inventory/${inventory}`, `${team.base}/keys/${key}`]) {
      expect((await team.guest.get(`${url}/refs`)).json().templates, url).toEqual([
        { id: expect.any(Number), name: 'Survey user' },
      ]);
      const del = await team.owner.del(url);
      expect(del.statusCode, url).toBe(409);
      expect(del.json().refs.templates, url).toEqual([{ id: expect.any(Number), name: 'Survey user' }]);
    }
  });

  it("refuses at save a template whose survey takes options from another project's objects", async () => {
    const foreignInventory = await insertInventory(h.deps, other.projectId, {
      type: 'static',
      inventory: 'x',
    });
    const foreignList = (
      await other.owner.post(`${other.base}/option_lists`, { name: 'Foreign', options: [] })
    ).json();
    const foreignKey = await insertKey(h.deps, other.projectId, { type: 'login_password', secret: {} });
    const repository_id = await insertRepository(h.deps, team.projectId, {
      git_url: 'https://example.com/r.git',
    });
    const environment_id = await insertEnvironment(h.deps, team.projectId, {});
    const template = (source: OptionsSource) => ({
      name: `Asks ${Math.random().toString(36).slice(2, 7)}`,
      app: 'bash',
      playbook: 'run.sh',
      repository_id,
      environment_id,
      survey_vars: [{ name: 'pick', title: 'Pick', type: 'enum', options_source: source }],
    });
    for (const [source, what, id] of [
      [{ type: 'inventory_hosts', inventory_id: foreignInventory }, 'Inventory', foreignInventory],
      [{ type: 'inventory_groups', inventory_id: foreignInventory }, 'Inventory', foreignInventory],
      [{ type: 'option_list', option_list_id: foreignList.id }, 'Option list', foreignList.id],
      [{ type: 'http', url: 'https://example.com/x', key_id: foreignKey }, 'Access key', foreignKey],
    ] as const) {
      const res = await team.owner.post(`${team.base}/templates`, template(source as OptionsSource));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({
        error: `${what} ${id} does not exist in this project`,
        fields: { survey_vars: expect.anything() },
      });
    }
    const own = (
      await team.owner.post(`${team.base}/option_lists`, { name: 'Own list', options: [] })
    ).json();
    const ok = await team.owner.post(
      `${team.base}/templates`,
      template({ type: 'option_list', option_list_id: own.id }),
    );
    expect(ok.statusCode, ok.body).toBe(201);
  });
});
