import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { answeredError, createHarness, type Harness } from '../../../test/support/harness';
import { createSecretKey } from '../../../test/support/integration-kit';
import { createTeam, type Team } from '../../../test/support/permission-matrix';
import { insertTemplate } from '../../../test/support/task-fixtures';
import type { NewTask, StartTask, TaskOrigin } from '../../ports';

type Call = { projectId: number; input: NewTask; origin: TaskOrigin };

/** Records what the receiver asks to start (starting a task has its own tests). */
function recordingStarter() {
  const calls: Call[] = [];
  let next = 1000;
  const starter: { start: StartTask; calls: Call[]; fail?: Error } = {
    calls,
    async start(projectId, input, origin) {
      if (starter.fail) throw starter.fail;
      calls.push({ projectId, input, origin });
      next += 1;
      return next;
    },
  };
  return starter;
}

const GITHUB_SECRET = 'gh-webhook-secret-9f3a';
const TOKEN_SECRET = 'token-secret-77c1';
const HMAC_SECRET = 'hmac-secret-1b2e';

const pushEvent = {
  ref: 'refs/heads/main',
  after: 'abc123',
  repository: { full_name: 'acme/app', id: 42.0 },
  commits: [{ id: 'abc123', message: 'Ship it' }],
  pusher: { name: 'octocat' },
};

const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

describe.each(testDialects())('integration webhooks on $name', (dialect) => {
  let h: Harness;
  let projects = 0;
  let team: Team;
  let starter: ReturnType<typeof recordingStarter>;
  let templateId: number;
  let tokenKey: number;
  let hmacKey: number;

  beforeAll(async () => {
    // The receiver asks whichever recording starter the running test put in place.
    h = await createHarness(dialect, {}, { startTask: (...args) => starter.start(...args) });
    team = await createTeam(h, 'Webhooks');
    templateId = await insertTemplate(h.deps, team.projectId, { name: 'Deploy app', playbook: 'deploy.sh' });
    tokenKey = await createSecretKey(team.owner, team.base, TOKEN_SECRET, 'Token secret');
    hmacKey = await createSecretKey(team.owner, team.base, HMAC_SECRET, 'HMAC secret');
  });
  afterAll(async () => h?.close());
  beforeEach(() => {
    starter = recordingStarter();
  });

  /** Creates a fresh project so project-level aliases see only this test's integrations. */
  const freshTeam = async () => {
    const created = await team.owner.post('/api/projects', { name: `Webhook scope ${++projects}` });
    const projectId = created.json().id as number;
    const t: Team = { ...team, projectId, base: `/api/project/${projectId}` };
    const tpl = await insertTemplate(h.deps, t.projectId, { name: 'Scoped', playbook: 'deploy.sh' });
    const key = await createSecretKey(t.owner, t.base, GITHUB_SECRET, 'GitHub secret');
    return { t, tpl, key };
  };

  const integration = async (t: Team, body: object, matchers: object[] = [], values: object[] = []) => {
    const res = await t.owner.post(`${t.base}/integrations`, {
      name: 'Hook',
      template_id: templateId,
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as number;
    for (const m of matchers) {
      const r = await t.owner.post(`${t.base}/integrations/${id}/matchers`, { name: 'm', ...m });
      expect(r.statusCode, r.body).toBe(200);
    }
    for (const v of values) {
      const r = await t.owner.post(`${t.base}/integrations/${id}/values`, { name: 'v', ...v });
      expect(r.statusCode, r.body).toBe(201);
    }
    return id;
  };
  const projectAlias = async (t: Team) =>
    (await t.owner.post(`${t.base}/integrations/aliases`)).json().alias as string;
  const integrationAlias = async (t: Team, id: number) =>
    (await t.owner.post(`${t.base}/integrations/${id}/aliases`)).json().alias as string;

  const send = (
    alias: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
    method = 'POST',
  ) =>
    h.app.inject({
      method: method as 'POST',
      url: `/api/integrations/${alias}`,
      payload: body,
      headers: { 'content-type': 'application/json', ...headers },
    });
  const githubPush = (alias: string, payload: object = pushEvent, secret = GITHUB_SECRET) => {
    const body = JSON.stringify(payload);
    return send(alias, body, {
      'x-github-event': 'push',
      'x-hub-signature-256': `sha256=${sign(secret, body)}`,
      'user-agent': 'GitHub-Hookshot/abc',
    });
  };

  const githubMatchers = [
    {
      match_type: 'body',
      body_data_type: 'json',
      key: 'repository.full_name',
      method: 'equals',
      value: 'acme/app',
    },
    {
      match_type: 'header',
      body_data_type: 'string',
      key: 'X-GitHub-Event',
      method: 'equals',
      value: 'push',
    },
  ];
  const githubValues = [
    { value_source: 'body', body_data_type: 'json', key: 'ref', variable: 'GIT_REF' },
    {
      value_source: 'body',
      body_data_type: 'json',
      key: 'commits.0.id',
      variable: 'COMMIT',
      variable_type: 'environment',
    },
    { value_source: 'body', body_data_type: 'json', key: 'repository.id', variable: 'REPO_ID' },
    {
      value_source: 'header',
      body_data_type: 'string',
      key: 'X-GitHub-Event',
      variable: 'event',
      variable_type: 'task',
    },
  ];

  /** How many webhook requests the metrics counted since `before` was read, by result. */
  const deliveriesSince = async (before?: Record<string, number>) => {
    const now: Record<string, number> = {};
    for (const v of (await h.deps.metrics.webhookDeliveries.get()).values)
      now[String(v.labels.result)] = v.value - (before?.[String(v.labels.result)] ?? 0);
    return now;
  };

  it('starts the template task with the extracted variables for a GitHub-signed push whose matchers match', async () => {
    const { t, tpl, key } = await freshTeam();
    const id = await integration(
      t,
      { template_id: tpl, auth_method: 'github', auth_secret_id: key },
      githubMatchers,
      githubValues,
    );
    const alias = await projectAlias(t);
    const res = await githubPush(alias);
    expect(res.statusCode, res.body).toBe(204);
    expect(starter.calls).toHaveLength(1);
    const call = starter.calls[0]!;
    expect(call.projectId).toBe(t.projectId);
    expect(call.origin).toEqual({ userId: null, integrationId: id, source: 'integration' });
    expect(call.input.template_id).toBe(tpl);
    expect(JSON.parse(call.input.environment!)).toEqual({
      GIT_REF: 'refs/heads/main',
      COMMIT: 'abc123',
      REPO_ID: 42,
    });
    expect(call.input.params).toEqual({ event: 'push' });
  });

  it('answers 401 and starts nothing for a bad, missing or differently keyed signature', async () => {
    const { t, tpl, key } = await freshTeam();
    await integration(t, { template_id: tpl, auth_method: 'github', auth_secret_id: key }, githubMatchers);
    const alias = await projectAlias(t);
    const before = await deliveriesSince();
    const body = JSON.stringify(pushEvent);
    const attempts: Record<string, string>[] = [
      { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign('wrong', body)}` },
      { 'x-github-event': 'push', 'x-hub-signature-256': sign(GITHUB_SECRET, body) },
      { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=' },
      { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${sign(GITHUB_SECRET, `${body} `)}` },
      { 'x-github-event': 'push' },
    ];
    for (const headers of attempts) {
      const res = await send(alias, body, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toEqual(
        answeredError(res, { error: 'Invalid signature or token', code: 'webhook_unauthorized' }),
      );
    }
    expect(starter.calls).toEqual([]);
    expect((await deliveriesSince(before)).unauthorized).toBe(attempts.length);
    // The secret never shows up in a response or a log line.
    expect(h.logLines.join('\n')).not.toContain(GITHUB_SECRET);
  });

  it('checks the signature over the raw bytes, whatever their formatting', async () => {
    const { t, tpl, key } = await freshTeam();
    const id = await integration(t, { template_id: tpl, auth_method: 'github', auth_secret_id: key });
    const alias = await integrationAlias(t, id);
    const body = '{ "ref" :  "refs/heads/dev",\n  "x": 1.50 }\n';
    const res = await send(alias, body, { 'x-hub-signature-256': `sha256=${sign(GITHUB_SECRET, body)}` });
    expect(res.statusCode).toBe(204);
    expect(starter.calls).toHaveLength(1);
    // A form-encoded GitHub delivery is signed the same way.
    const form = `payload=${encodeURIComponent(JSON.stringify(pushEvent))}`;
    const formRes = await send(alias, form, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-hub-signature-256': `sha256=${sign(GITHUB_SECRET, form)}`,
    });
    expect(formRes.statusCode).toBe(204);
    expect(starter.calls).toHaveLength(2);
  });

  it('token method: the configured header must equal the secret', async () => {
    const id = await integration(team, {
      auth_method: 'token',
      auth_secret_id: tokenKey,
      auth_header: 'X-Deploy-Token',
    });
    const alias = await integrationAlias(team, id);
    expect((await send(alias, '{}', { 'x-deploy-token': 'nope' })).statusCode).toBe(401);
    expect((await send(alias, '{}', {})).statusCode).toBe(401);
    expect((await send(alias, '{}', { 'x-deploy-token': `${TOKEN_SECRET}x` })).statusCode).toBe(401);
    expect(starter.calls).toEqual([]);
    expect((await send(alias, '{}', { 'X-Deploy-Token': TOKEN_SECRET })).statusCode).toBe(204);
    expect(starter.calls).toHaveLength(1);
    expect(starter.calls[0]!.origin.integrationId).toBe(id);
  });

  it('hmac method: the configured header carries the hex HMAC-SHA256 of the body', async () => {
    const id = await integration(team, {
      auth_method: 'hmac',
      auth_secret_id: hmacKey,
      auth_header: 'X-Signature',
    });
    const alias = await integrationAlias(team, id);
    const body = '{"event":"deploy"}';
    expect((await send(alias, body, { 'x-signature': sign('wrong', body) })).statusCode).toBe(401);
    expect((await send(alias, body, { 'x-signature': sign(HMAC_SECRET, '{}') })).statusCode).toBe(401);
    expect(starter.calls).toEqual([]);
    expect((await send(alias, body, { 'x-signature': sign(HMAC_SECRET, body) })).statusCode).toBe(204);
    expect(starter.calls).toHaveLength(1);
  });

  it('a project alias runs only integrations whose matchers all match, never one without matchers', async () => {
    const { t, tpl } = await freshTeam();
    const both = await integration(t, { name: 'Both', template_id: tpl }, githubMatchers);
    const other = await integration(t, { name: 'Other repo', template_id: tpl }, [
      { ...githubMatchers[0], value: 'acme/other' },
    ]);
    await integration(t, { name: 'No matchers', template_id: tpl });
    const alias = await projectAlias(t);
    const before = await deliveriesSince();

    const res = await send(alias, JSON.stringify(pushEvent), { 'x-github-event': 'push' });
    expect(res.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId)).toEqual([both]);

    // Only one of two matchers matches: nothing runs, and the answer is still 204.
    starter.calls.length = 0;
    const partly = await send(alias, JSON.stringify(pushEvent), { 'x-github-event': 'issues' });
    expect(partly.statusCode).toBe(204);
    expect(starter.calls).toEqual([]);

    const otherRepo = await send(
      alias,
      JSON.stringify({ ...pushEvent, repository: { full_name: 'acme/other' } }),
      { 'x-github-event': 'push' },
    );
    expect(otherRepo.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId)).toEqual([other]);
    expect(await deliveriesSince(before)).toMatchObject({ started: 2, ignored: 1 });
  });

  it("an integration alias applies the integration's matchers", async () => {
    const id = await integration(team, {}, [
      { match_type: 'body', body_data_type: 'json', key: 'ref', method: 'equals', value: 'refs/heads/main' },
    ]);
    const alias = await integrationAlias(team, id);
    const before = await deliveriesSince();
    const dev = await send(alias, JSON.stringify({ ...pushEvent, ref: 'refs/heads/dev' }));
    expect(dev.statusCode).toBe(204);
    expect(starter.calls).toEqual([]);
    const main = await send(alias, JSON.stringify(pushEvent));
    expect(main.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId)).toEqual([id]);
    expect(await deliveriesSince(before)).toMatchObject({ started: 1, ignored: 1 });
  });

  it('an integration alias runs an integration without matchers for any request', async () => {
    const id = await integration(team, {});
    const alias = await integrationAlias(team, id);
    const res = await send(alias, '{"anything": true}');
    expect(res.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId)).toEqual([id]);
  });

  it('a failing signature for one integration does not start it while a matching one runs', async () => {
    const { t, tpl, key } = await freshTeam();
    const wrongKey = await createSecretKey(t.owner, t.base, 'another-secret', 'Another');
    const good = await integration(
      t,
      { name: 'Good', template_id: tpl, auth_method: 'github', auth_secret_id: key },
      githubMatchers,
    );
    await integration(
      t,
      { name: 'Bad', template_id: tpl, auth_method: 'github', auth_secret_id: wrongKey },
      githubMatchers,
    );
    const alias = await projectAlias(t);
    const res = await githubPush(alias);
    expect(res.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId)).toEqual([good]);
  });

  it('matches JSON paths and headers with equals, unequals and contains', async () => {
    const { t, tpl } = await freshTeam();
    const unequal = await integration(t, { name: 'Not main', template_id: tpl }, [
      {
        match_type: 'body',
        body_data_type: 'json',
        key: 'ref',
        method: 'unequals',
        value: 'refs/heads/main',
      },
    ]);
    const contains = await integration(t, { name: 'Hookshot', template_id: tpl }, [
      {
        match_type: 'header',
        body_data_type: 'string',
        key: 'User-Agent',
        method: 'contains',
        value: 'Hookshot',
      },
      {
        match_type: 'body',
        body_data_type: 'json',
        key: 'commits.0.message',
        method: 'contains',
        value: 'Ship',
      },
    ]);
    const whole = await integration(t, { name: 'Whole body', template_id: tpl }, [
      { match_type: 'body', body_data_type: 'string', key: '-', method: 'contains', value: '"octocat"' },
    ]);
    const numeric = await integration(t, { name: 'Numeric', template_id: tpl }, [
      { match_type: 'body', body_data_type: 'json', key: 'repository.id', method: 'equals', value: '42' },
    ]);
    const alias = await projectAlias(t);

    const main = await send(alias, JSON.stringify(pushEvent), { 'user-agent': 'GitHub-Hookshot/1' });
    expect(main.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId).sort()).toEqual(
      [contains, whole, numeric].sort(),
    );

    starter.calls.length = 0;
    const dev = await send(alias, JSON.stringify({ ...pushEvent, ref: 'refs/heads/dev' }), {
      'user-agent': 'curl/8',
    });
    expect(dev.statusCode).toBe(204);
    expect(starter.calls.map((c) => c.origin.integrationId).sort()).toEqual([unequal, whole, numeric].sort());
  });

  it('puts task-type values in params and keeps the integration defaults (which win for environment keys)', async () => {
    const id = await integration(
      team,
      {
        task_params: {
          environment: '{"STAGE":"prod","GIT_REF":"pinned"}',
          message: 'Webhook deploy',
          git_branch: 'release',
          arguments: '["--verbose"]',
          params: { debug: true },
        },
      },
      [],
      githubValues,
    );
    const alias = await integrationAlias(team, id);
    expect((await send(alias, JSON.stringify(pushEvent), { 'x-github-event': 'release' })).statusCode).toBe(
      204,
    );
    const input = starter.calls[0]!.input;
    expect(JSON.parse(input.environment!)).toEqual({
      STAGE: 'prod',
      GIT_REF: 'pinned',
      COMMIT: 'abc123',
      REPO_ID: 42,
    });
    expect(input).toMatchObject({
      template_id: templateId,
      message: 'Webhook deploy',
      git_branch: 'release',
      arguments: '["--verbose"]',
      params: { debug: true, event: 'release' },
    });
  });

  it('answers 404 for an unknown, malformed or deleted alias', async () => {
    expect((await send('doesNotExist0000000000000000000', '{}')).statusCode).toBe(404);
    expect((await send('bad%20alias', '{}')).statusCode).toBe(404);
    // Longer than any alias: Fastify refuses the path itself.
    expect((await send('x'.repeat(200), '{}')).statusCode).toBe(414);
    const id = await integration(team, {});
    const alias = await integrationAlias(team, id);
    expect(
      (await send(alias.toLowerCase() === alias ? alias.toUpperCase() : alias.toLowerCase(), '{}'))
        .statusCode,
    ).toBe(404);
    expect((await team.owner.del(`${team.base}/integrations/${id}`)).statusCode).toBe(204);
    const gone = await send(alias, '{}');
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual(
      answeredError(gone, { error: 'Integration alias not found', code: 'webhook_not_found' }),
    );
    expect(starter.calls).toEqual([]);
  });

  it('accepts GET and odd bodies without a 5xx', async () => {
    const id = await integration(team, {}, [], githubValues);
    const alias = await integrationAlias(team, id);
    expect((await h.app.inject({ method: 'GET', url: `/api/integrations/${alias}` })).statusCode).toBe(204);
    expect((await h.app.inject({ method: 'POST', url: `/api/integrations/${alias}` })).statusCode).toBe(204);
    const odd: [string | Buffer, Record<string, string>][] = [
      ['', {}],
      ['{"unterminated": ', {}],
      ['not json at all', { 'content-type': 'text/plain' }],
      ['<xml/>', { 'content-type': 'application/xml' }],
      [Buffer.from([0xff, 0xfe, 0x00, 0x01]), { 'content-type': 'application/octet-stream' }],
      ['null', {}],
      ['[1,2,3]', {}],
      [JSON.stringify({ ref: 'x'.repeat(3 * 1024 * 1024) }), {}],
    ];
    for (const [body, headers] of odd) {
      const res = await send(alias, body, headers);
      expect(res.statusCode, String(body).slice(0, 40)).toBe(204);
    }
    expect(starter.calls).toHaveLength(odd.length + 2);
    const huge = await send(alias, 'x'.repeat(26 * 1024 * 1024));
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error).toBe('Request body is too large');
  });

  it('answers 204 when the task cannot start, and starts the task of the next delivery', async () => {
    const id = await integration(team, {});
    const alias = await integrationAlias(team, id);
    starter.fail = new Error('template has no repository');
    expect((await send(alias, '{}')).statusCode).toBe(204);
    const replacement = recordingStarter();
    starter = replacement;
    expect((await send(alias, '{}')).statusCode).toBe(204);
    expect(replacement.calls).toHaveLength(1);
  });

  it('leaves JSON parsing of every other route alone', async () => {
    const bad = await team.owner.request('POST', `${team.base}/integrations`, '{"name": ');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Request body is not valid JSON');
    const ok = await team.owner.post(`${team.base}/integrations`, {
      name: 'Still JSON',
      template_id: templateId,
    });
    expect(ok.statusCode).toBe(201);
  });
});
