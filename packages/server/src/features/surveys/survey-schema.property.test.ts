import {
  emptySurveyVar,
  type ProjectRole,
  surveyJsonSchema,
  surveySchemaKeywords,
  surveyVisibility,
  type TemplateSurveyVar,
} from '@signalbox/contracts';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  gitRepo,
  insertRepository,
  insertTemplate,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { checkSurveyAnswers, surveySchemaOf } from './survey-check';

const v = (name: string, extra: Partial<TemplateSurveyVar>): TemplateSurveyVar => ({
  ...emptySurveyVar,
  name,
  title: name,
  ...extra,
});
const options = (...values: string[]) => values.map((value) => ({ name: value.toUpperCase(), value }));

/** A survey with every type and rule, two variables shown only under a condition. */
const survey: TemplateSurveyVar[] = [
  v('toggle', { type: 'boolean', required: true }),
  v('name', {
    type: 'string',
    required: true,
    min_length: 2,
    max_length: 8,
    regex: '^[a-z]+$',
    regex_message: 'letters',
    visible_when: { field: 'toggle', values: ['true'] },
  }),
  v('note', { type: 'text', max_length: 20 }),
  v('pin', { type: 'secret', min_length: 4 }),
  v('count', { type: 'int', min: 2, max: 10, step: 2 }),
  v('ratio', { type: 'number', min: 0, max: 1 }),
  v('stage', {
    type: 'enum',
    required: true,
    values: options('prod', 'dev'),
    visible_when: { field: 'toggle', values: ['false'] },
  }),
  v('tags', { type: 'multiselect', values: options('a', 'b', 'c'), min_selected: 1, max_selected: 2 }),
  v('day', { type: 'date' }),
  v('at', { type: 'datetime' }),
  v('labels', { type: 'kv' }),
  v('legacy', { type: 'int' }),
  v('plain', { type: '', required: true, default_value: 'x' }),
];

/** Valid and invalid answers of each variable (toggle's are drawn apart: it decides what is shown). */
const samples: Record<string, { valid: unknown[]; invalid: unknown[] }> = {
  name: { valid: ['ab', 'abcdefgh', 'web'], invalid: ['a', 'abcdefghi', 'Web1', 3, '', null, ['ab']] },
  note: { valid: ['', 'two\nlines', 'x'.repeat(20)], invalid: ['x'.repeat(21), 1, false] },
  pin: { valid: ['1234', 'long secret'], invalid: ['123', 1234] },
  count: { valid: [2, 4, 10], invalid: [0, 3, 12, 4.5, '4', null] },
  ratio: { valid: [0, 0.5, 1], invalid: [-0.1, 1.01, '0.5', true] },
  stage: { valid: ['prod', 'dev'], invalid: ['test', 'PROD', '', ['prod'], 1] },
  tags: { valid: [['a'], ['b', 'c']], invalid: [[], ['a', 'b', 'c'], ['d'], ['a', 'a'], 'a', [1]] },
  day: { valid: ['2030-01-31', '2024-02-29'], invalid: ['2030-02-30', '2030-1-31', '20300131', 1] },
  at: {
    valid: ['2030-01-31T09:30:00Z', '2030-01-31T09:30:00.5-05:00'],
    invalid: ['2030-01-31T09:30:00', '2030-01-31', 'now'],
  },
  labels: { valid: [{}, { a: 'x', b: '' }], invalid: [{ a: 1 }, ['x'], { '': 'x' }, 'a=x'] },
  legacy: { valid: [7, '7', ' -3 ', ''], invalid: ['seven', 7.5, true] },
  plain: { valid: ['', 'y', '  '], invalid: [5, null, {}] },
};
const toggleSamples = { valid: [true, false], invalid: ['true', 1, null] };

type Pick = { kind: 'absent' } | { kind: 'valid' | 'invalid'; value: unknown };
// Invalid answers are drawn less often, so that whole payloads are valid often enough too.
const pick = (s: { valid: unknown[]; invalid: unknown[] }) =>
  fc.oneof(
    { arbitrary: fc.constant<Pick>({ kind: 'absent' }), weight: 3 },
    { arbitrary: fc.constantFrom(...s.valid).map((value): Pick => ({ kind: 'valid', value })), weight: 6 },
    {
      arbitrary: fc.constantFrom(...s.invalid).map((value): Pick => ({ kind: 'invalid', value })),
      weight: 1,
    },
  );

/** A payload, and the verdict the rules give it, worked out here from the rules, not from the schema. */
const payloads = fc
  .record({
    toggle: pick(toggleSamples),
    ...Object.fromEntries(Object.entries(samples).map(([k, s]) => [k, pick(s)])),
  })
  .map((picks: Record<string, Pick>) => {
    const answers: Record<string, unknown> = {};
    for (const [name, p] of Object.entries(picks)) if (p.kind !== 'absent') answers[name] = p.value;
    const toggle = picks.toggle as Pick;
    const shown = (name: string) =>
      name === 'name'
        ? toggle.kind === 'valid' && toggle.value === true
        : name === 'stage'
          ? toggle.kind === 'valid' && toggle.value === false
          : true;
    const requiredNow = (name: string) =>
      name === 'toggle' || (name === 'name' && shown(name)) || (name === 'stage' && shown(name));
    const valid = Object.entries(picks).every(([name, p]) => {
      if (!shown(name)) return true;
      if (p.kind === 'absent') return !requiredNow(name);
      return p.kind === 'valid';
    });
    return { answers, valid };
  });

/** Conditions in a chain, on answers filled by defaults, on a multiselect and on a number. */
const chained: TemplateSurveyVar[] = [
  v('a', { type: 'boolean', required: true, default_value: 'true' }),
  v('b', {
    type: 'enum',
    required: true,
    default_value: 'x',
    values: options('x', 'y'),
    visible_when: { field: 'a', values: ['true'] },
  }),
  v('c', { type: 'string', required: true, min_length: 3, visible_when: { field: 'b', values: ['y'] } }),
  v('d', { type: 'int', required: true, visible_when: { field: 'a', values: ['false'] } }),
  v('e', { type: 'multiselect', values: options('p', 'q'), visible_when: { field: 'd', values: ['3'] } }),
  v('f', { type: 'number', min: 1, visible_when: { field: 'e', values: ['q'] } }),
  v('g', { type: 'string', required: true, visible_when: { field: 'outside', values: ['1', 'true'] } }),
];
const chainedAnswers = fc.record(
  {
    a: fc.constantFrom(true, false, 'true', null, ''),
    b: fc.constantFrom('x', 'y', 'z', '', null),
    c: fc.constantFrom('abc', 'ab', 5),
    d: fc.constantFrom(3, 4, '3', 'x'),
    e: fc.constantFrom(['p'], ['q'], ['p', 'q'], [], ['r']),
    f: fc.constantFrom(1, 0, 'one'),
    g: fc.constantFrom('yes', '', 1),
    outside: fc.constantFrom(1, '1', true, 'true', 2, [1], null),
  },
  { requiredKeys: [] },
);

describe.each(testDialects())('the served survey schema agrees with the run check on $name', (dialect) => {
  let h: Harness;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let templateId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    const owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    const repositoryId = await insertRepository(h.deps, projectId, {
      git_url: gitRepo({ 'run.sh': 'echo ran\n' }),
    });
    templateId = await insertTemplate(h.deps, projectId, {
      name: 'Every type',
      repository_id: repositoryId,
      playbook: 'run.sh',
      allow_parallel_tasks: 1,
      survey_vars: JSON.stringify(survey),
    });
  });
  afterAll(async () => h?.close());

  it('gives every generated payload the same verdict: plain ajv on the served document, the server, the rules', async () => {
    const served = await members.guest.get(`/api/project/${projectId}/templates/${templateId}/survey-schema`);
    expect(served.statusCode).toBe(200);
    // A plain validator, as a client would set one up: only the vendor keywords added.
    const ajv = new Ajv2020({ allErrors: true });
    addFormats(ajv);
    for (const keyword of surveySchemaKeywords) ajv.addKeyword(keyword);
    const validate = ajv.compile(served.json());
    const { vars, doc } = await surveySchemaOf(h.deps, { projectId, templateId }, JSON.stringify(survey));
    expect(doc).toEqual(served.json());

    let valids = 0;
    fc.assert(
      fc.property(payloads, ({ answers, valid }) => {
        expect(validate(answers), JSON.stringify(answers)).toBe(valid);
        const verdict = checkSurveyAnswers(doc, vars, answers);
        expect(verdict.valid, JSON.stringify(answers)).toBe(valid);
        if (!verdict.valid) expect(Object.keys(verdict.fields).length).toBeGreaterThan(0);
        if (valid) valids++;
      }),
      { numRuns: 1500 },
    );
    // Both kinds were drawn in numbers.
    expect(valids).toBeGreaterThan(100);
    expect(valids).toBeLessThan(1400);
  });

  it('shows and hides variables as surveyVisibility says, for every answer a chain of conditions can get', async () => {
    const options = new Map([
      [
        'b',
        {
          options: [
            { value: 'x', label: 'X' },
            { value: 'y', label: 'Y' },
          ],
        },
      ],
      [
        'e',
        {
          options: [
            { value: 'p', label: 'P' },
            { value: 'q', label: 'Q' },
          ],
        },
      ],
    ]);
    const ajv = new Ajv2020({ allErrors: true });
    addFormats(ajv);
    for (const keyword of surveySchemaKeywords) ajv.addKeyword(keyword);
    const validate = ajv.compile(surveyJsonSchema(chained, options));
    let hidden = 0;
    fc.assert(
      fc.property(chainedAnswers, (answers) => {
        // The same verdict as a survey of only the variables shown, without conditions, given only their values.
        const shown = surveyVisibility(chained, answers);
        const visible = chained.filter((x) => shown.get(x.name)).map((x) => ({ ...x, visible_when: null }));
        const kept = Object.fromEntries(Object.entries(answers).filter(([k]) => shown.get(k) !== false));
        const expected = ajv.validate(surveyJsonSchema(visible, options), kept);
        expect(validate(answers), JSON.stringify(answers)).toBe(expected);
        hidden += chained.length - visible.length;
      }),
      { numRuns: 2000 },
    );
    expect(hidden).toBeGreaterThan(2000);
  });

  it('answers a sample of them through the API as the rules say', async () => {
    const sample = fc.sample(payloads, { numRuns: 200, seed: 7 });
    const chosen = [
      ...sample.filter((s) => s.valid).slice(0, 6),
      ...sample.filter((s) => !s.valid).slice(0, 10),
    ];
    expect(chosen).toHaveLength(16);
    for (const { answers, valid } of chosen) {
      const { pin, ...environment } = answers;
      const res = await members.task_runner.post(`/api/project/${projectId}/tasks`, {
        template_id: templateId,
        environment: JSON.stringify(environment),
        ...(pin === undefined ? {} : { secret: JSON.stringify({ pin }) }),
      });
      expect(res.statusCode, `${JSON.stringify(answers)}: ${res.body}`).toBe(valid ? 201 : 400);
      if (valid) await waitForStatus(h.deps, res.json().id, ['success', 'error']);
      else expect(Object.keys(res.json().field_errors).every((k) => k.startsWith('survey.'))).toBe(true);
    }
  });
});
