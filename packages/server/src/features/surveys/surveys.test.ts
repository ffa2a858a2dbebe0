import { emptySurveyVar, type ProjectRole, type TemplateSurveyVar } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  waitForStatus,
} from '../../../test/support/task-fixtures';

const v = (name: string, extra: Partial<TemplateSurveyVar> = {}): TemplateSurveyVar => ({
  ...emptySurveyVar,
  name,
  title: name.toUpperCase(),
  ...extra,
});

describe.each(testDialects())('typed survey answers on $name', (dialect) => {
  let h: Harness;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let otherProjectId: number;
  let repositoryId: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    ({ projectId: otherProjectId } = await h.projectWithTeam(owner, 'Other'));
    repositoryId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'run.sh': 'echo ran\n' }),
    });
  });
  afterAll(async () => h?.close());

  const template = (vars: TemplateSurveyVar[], project = projectId) =>
    insertTemplate(h.deps, project, {
      name: `Survey ${Math.random()}`,
      repository_id: repositoryId,
      playbook: 'run.sh',
      allow_parallel_tasks: 1,
      survey_vars: JSON.stringify(vars),
    });

  /** Posts a run; answers its status and body. A started task is waited for, so none is left running. */
  async function run(tpl: number, environment: Record<string, unknown>, secret?: Record<string, unknown>) {
    const res = await members.task_runner.post(p('/tasks'), {
      template_id: tpl,
      environment: JSON.stringify(environment),
      ...(secret ? { secret: JSON.stringify(secret) } : {}),
    });
    if (res.statusCode === 201) await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    return res;
  }

  /** Each answer refused with the field error's code (and params, when given); each `ok` answer accepted. */
  async function expectVerdicts(
    tpl: number,
    name: string,
    ok: unknown[],
    refused: [unknown, string, Record<string, unknown>?][],
  ) {
    for (const value of ok) {
      const res = await run(tpl, { [name]: value });
      expect(res.statusCode, `${JSON.stringify(value)}: ${res.body}`).toBe(201);
    }
    for (const [value, code, params] of refused) {
      const res = await run(tpl, { [name]: value });
      expect(res.statusCode, `${JSON.stringify(value)}: ${res.body}`).toBe(400);
      const body = res.json();
      expect(Object.keys(body.field_errors), JSON.stringify(value)).toEqual([`survey.${name}`]);
      expect(body.field_errors[`survey.${name}`], JSON.stringify(value)).toMatchObject({
        code,
        ...(params ? { params } : {}),
      });
      expect(body.code).toBe(code);
    }
  }

  it('answers the survey schema to every member, 404 for another project’s template', async () => {
    const tpl = await template([
      v('flag', { type: 'boolean', default_value: 'true', description: 'Turn it on' }),
      v('envs', { type: 'enum', values: [{ name: 'Production', value: 'prod' }], required: true }),
    ]);
    for (const role of ['guest', 'task_runner', 'manager', 'owner'] as const) {
      const res = await members[role].get(p(`/templates/${tpl}/survey-schema`));
      expect(res.statusCode, role).toBe(200);
      expect(res.json()).toMatchObject({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        required: ['envs'],
        properties: {
          flag: {
            type: 'boolean',
            title: 'FLAG',
            description: 'Turn it on',
            default: true,
            'x-signalbox-type': 'boolean',
            'x-signalbox-order': 0,
          },
          envs: { oneOf: [{ const: 'prod', title: 'Production' }], 'x-signalbox-order': 1 },
        },
      });
    }
    const other = await template([v('x')], otherProjectId);
    expect((await members.owner.get(p(`/templates/${other}/survey-schema`))).statusCode).toBe(404);
    expect((await members.owner.get(p('/templates/999999/survey-schema'))).statusCode).toBe(404);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await members.guest.get('/api/openapi.json')).json();
    const path = Object.keys(doc.paths).find((key) => key.endsWith('/templates/{template_id}/survey-schema'));
    expect(path).toBeDefined();
    const answer = doc.paths[path as string].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(answer)).toMatch(/draft 2020-12/);
    expect(answer.required).toEqual(expect.arrayContaining(['$schema', 'type', 'properties']));
  });

  it('checks text answers: lengths, the regex with its message, blank text for a required one', async () => {
    const tpl = await template([
      v('host', {
        min_length: 3,
        max_length: 6,
        regex: '^[a-z]+$',
        regex_message: 'lower-case letters only',
      }),
    ]);
    await expectVerdicts(
      tpl,
      'host',
      ['abc', 'abcdef'],
      [
        ['ab', 'too_short', { min: 3, field: 'HOST' }],
        ['abcdefg', 'too_long', { max: 6 }],
        ['ABC', 'survey_regex_message', { message: 'lower-case letters only' }],
        [5, 'not_string'],
      ],
    );
    const plain = await template([v('code', { regex: '^\\d{3}$', required: true })]);
    await expectVerdicts(
      plain,
      'code',
      ['123'],
      [
        ['12a', 'survey_pattern_mismatch', { pattern: '^\\d{3}$' }],
        ['  ', 'survey_var_required', { title: 'CODE' }],
      ],
    );
  });

  it('checks numbers: bounds, step, whole numbers; a plain int takes its answer as text', async () => {
    const tpl = await template([v('n', { type: 'int', min: 2, max: 10, step: 2 })]);
    await expectVerdicts(
      tpl,
      'n',
      [2, 10, 6],
      [
        [0, 'too_small', { min: 2 }],
        [12, 'too_large', { max: 10 }],
        [5, 'not_multiple_of', { step: 2 }],
        [4.5, 'not_integer'],
        ['4', 'not_integer'],
      ],
    );
    const ratio = await template([v('r', { type: 'number', min: -1.5, max: 1.5, step: 0.5 })]);
    await expectVerdicts(
      ratio,
      'r',
      [-1.5, 0, 1.5, 1],
      [
        [-2, 'too_small'],
        [1.6, 'too_large'],
        [0.25, 'not_multiple_of', { step: 0.5 }],
        ['1', 'not_number'],
      ],
    );
    const plain = await template([v('retries', { type: 'int' })]);
    await expectVerdicts(
      plain,
      'retries',
      [5, '5', ' 7 ', '-3', ''],
      [
        ['five', 'not_integer'],
        [1.5, 'not_integer'],
      ],
    );
  });

  it('checks booleans, dates, date-times and key/value answers', async () => {
    const tpl = await template([v('b', { type: 'boolean' })]);
    await expectVerdicts(
      tpl,
      'b',
      [true, false],
      [
        ['true', 'not_boolean'],
        [1, 'not_boolean'],
      ],
    );
    const day = await template([v('d', { type: 'date' })]);
    await expectVerdicts(
      day,
      'd',
      ['2030-01-31'],
      [
        ['2030-02-30', 'not_a_date'],
        ['31.01.2030', 'not_a_date'],
      ],
    );
    const at = await template([v('t', { type: 'datetime' })]);
    await expectVerdicts(
      at,
      't',
      ['2030-01-31T09:30:00Z', '2030-01-31T09:30:00+02:00'],
      [
        ['2030-01-31T09:30:00', 'invalid_date_offset'],
        ['2030-01-31', 'invalid_date_offset'],
      ],
    );
    const kv = await template([v('labels', { type: 'kv', required: true })]);
    await expectVerdicts(
      kv,
      'labels',
      [{ team: 'ops', tier: '1' }],
      [
        [{ team: 1 }, 'invalid_format'],
        [['a'], 'not_object'],
        [{}, 'survey_var_required'],
        [{ '': 'x' }, 'invalid_format'],
      ],
    );
  });

  it('checks choices: enum and multiselect options, how many may be chosen', async () => {
    const values = [
      { name: 'A', value: 'a' },
      { name: 'B', value: 'b' },
      { name: 'C', value: 'c' },
    ];
    const one = await template([v('pick', { type: 'enum', values })]);
    await expectVerdicts(
      one,
      'pick',
      ['a', 'c'],
      [
        ['d', 'not_one_of', { options: 'a, b, c' }],
        [['a'], 'not_string'],
      ],
    );
    const some = await template([
      v('tags', { type: 'multiselect', values, min_selected: 1, max_selected: 2 }),
    ]);
    await expectVerdicts(
      some,
      'tags',
      [['a'], ['a', 'c']],
      [
        [[], 'too_few', { min: 1 }],
        [['a', 'b', 'c'], 'too_many', { max: 2 }],
        [['a', 'x'], 'not_one_of'],
        [['a', 'a'], 'invalid_value'],
        ['a', 'not_list'],
      ],
    );
  });

  it('refuses a value the options no longer offer when the run is submitted', async () => {
    const tpl = await template([
      v('region', {
        type: 'enum',
        values: [
          { name: 'EU', value: 'eu' },
          { name: 'US', value: 'us' },
        ],
      }),
    ]);
    const schema = (await members.task_runner.get(p(`/templates/${tpl}/survey-schema`))).json();
    expect(schema.properties.region.oneOf.map((o: { const: string }) => o.const)).toEqual(['eu', 'us']);
    // The template's options change while the run dialog is open.
    await h.deps.db
      .updateTable('template')
      .set({
        survey_vars: JSON.stringify([v('region', { type: 'enum', values: [{ name: 'EU', value: 'eu' }] })]),
      })
      .where('id', '=', tpl)
      .execute();
    const refused = await run(tpl, { region: 'us' });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().field_errors['survey.region']).toMatchObject({
      code: 'not_one_of',
      params: { options: 'eu' },
    });
    expect((await run(tpl, { region: 'eu' })).statusCode).toBe(201);
  });

  it('neither requires nor checks a hidden variable, and drops its value; shown, it is checked', async () => {
    const tpl = await template([
      v('mode', {
        type: 'enum',
        values: [
          { name: 'Fast', value: 'fast' },
          { name: 'Safe', value: 'safe' },
        ],
      }),
      v('depth', {
        type: 'int',
        min: 1,
        max: 3,
        required: true,
        visible_when: { field: 'mode', values: ['safe'] },
      }),
      v('deep', { type: 'boolean', visible_when: { field: 'depth', values: ['3'] } }),
    ]);
    // Hidden (mode is not safe): an invalid depth and deep are ignored and not passed on.
    const hidden = await run(tpl, { mode: 'fast', depth: 'lots', deep: 'maybe', extra: 1 });
    expect(hidden.statusCode, hidden.body).toBe(201);
    expect(JSON.parse(hidden.json().environment)).toEqual({ mode: 'fast', extra: 1 });
    expect((await run(tpl, {})).statusCode).toBe(201);
    // Shown: depth is required and checked; deep is shown only when depth is 3.
    const missing = await run(tpl, { mode: 'safe' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().field_errors).toEqual({
      'survey.depth': expect.objectContaining({ code: 'survey_var_required' }),
    });
    const big = await run(tpl, { mode: 'safe', depth: 4 });
    expect(big.json().field_errors['survey.depth']).toMatchObject({ code: 'too_large' });
    const shallow = await run(tpl, { mode: 'safe', depth: 2, deep: 'maybe' });
    expect(shallow.statusCode, shallow.body).toBe(201);
    expect(JSON.parse(shallow.json().environment)).toEqual({ mode: 'safe', depth: 2 });
    const deep = await run(tpl, { mode: 'safe', depth: 3, deep: 'maybe' });
    expect(deep.json().field_errors['survey.deep']).toMatchObject({ code: 'not_boolean' });
    expect((await run(tpl, { mode: 'safe', depth: 3, deep: true })).statusCode).toBe(201);
  });

  it('fills typed defaults of required variables, which also decide what is shown', async () => {
    const tpl = await template([
      v('on', { type: 'boolean', required: true, default_value: 'true' }),
      v('n', {
        type: 'number',
        required: true,
        default_value: '2.5',
        visible_when: { field: 'on', values: ['true'] },
      }),
      v('tags', {
        type: 'multiselect',
        required: true,
        values: [{ name: 'A', value: 'a' }],
        default_value: '["a"]',
      }),
      v('labels', { type: 'kv', required: true, default_value: '{"k":"v"}' }),
      v('pin', { type: 'secret', required: true, default_value: 's3cret-default' }),
    ]);
    const res = await run(tpl, {});
    expect(res.statusCode, res.body).toBe(201);
    expect(JSON.parse(res.json().environment)).toEqual({ on: true, n: 2.5, tags: ['a'], labels: { k: 'v' } });
    expect(res.body).not.toContain('s3cret-default');
    const off = await run(tpl, { on: false });
    expect(JSON.parse(off.json().environment)).toEqual({ on: false, tags: ['a'], labels: { k: 'v' } });
  });

  it('takes secret answers from the secret values, checks them, and never answers them', async () => {
    const tpl = await template([v('token', { type: 'secret', required: true, min_length: 8 })]);
    const short = await run(tpl, {}, { token: 'sh0rt' });
    expect(short.json().field_errors['survey.token']).toMatchObject({
      code: 'too_short',
      params: { min: 8 },
    });
    expect(short.body).not.toContain('sh0rt');
    const ok = await run(tpl, {}, { token: 'long-enough-s3cret' });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.body).not.toContain('long-enough-s3cret');
    const listed = await members.task_runner.get(p(`/tasks/${ok.json().id}`));
    expect(listed.body).not.toContain('long-enough-s3cret');
    const stored = await h.deps.db
      .selectFrom('task')
      .select('secret')
      .where('id', '=', ok.json().id)
      .executeTakeFirstOrThrow();
    // Encrypted while the task waits and runs, gone once it ended.
    expect(String(stored.secret ?? '')).not.toContain('long-enough-s3cret');
  });
  it('neither demands nor fails a hidden required variable for a run no one answers', async () => {
    const tpl = await template([
      v('mode', {
        type: 'enum',
        required: true,
        default_value: 'fast',
        values: [{ name: 'Fast', value: 'fast' }],
      }),
      v('depth', { type: 'int', required: true, visible_when: { field: 'mode', values: ['safe'] } }),
    ]);
    // A schedule may be saved: the only required variable it cannot answer is hidden.
    const schedule = await members.manager.post(p('/schedules'), {
      template_id: tpl,
      cron_format: '0 3 * * *',
      name: 'Nightly',
      active: false,
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    // As a schedule or an integration starts it: the run does not stop at the hidden variable.
    const id = await h.deps.startTask(projectId, { template_id: tpl }, { userId: null });
    const task = await waitForStatus(h.deps, id, ['success', 'error']);
    expect(task.status).toBe('success');
  });
});
