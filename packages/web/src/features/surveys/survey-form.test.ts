import { emptySurveyVar, surveyJsonSchema, type TemplateSurveyVar } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import {
  formFields,
  fromLocalInput,
  initialAnswers,
  surveyBody,
  toLocalInput,
  visibleFields,
} from './survey-form';

// A survey's JSON Schema document as the server answers it (x-signalbox-* annotations, options as oneOf).
const doc = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['env', 'hosts'],
  properties: {
    hosts: {
      type: 'array',
      title: 'Hosts',
      items: {
        oneOf: [
          { const: 'web1', title: 'Web 1' },
          { const: 'web2', title: 'Web 2' },
        ],
      },
      minItems: 1,
      maxItems: 2,
      'x-signalbox-type': 'multiselect',
      'x-signalbox-order': 2,
    },
    env: {
      type: 'string',
      title: 'Environment',
      description: 'Where to deploy',
      oneOf: [
        { const: 'prod', title: 'Production' },
        { const: 'dev', title: 'Development' },
      ],
      default: 'dev',
      'x-signalbox-type': 'enum',
      'x-signalbox-order': 0,
    },
    approve: {
      type: 'boolean',
      title: 'Approved',
      'x-signalbox-type': 'boolean',
      'x-signalbox-order': 1,
      'x-signalbox-visible-when': { field: 'env', values: ['prod'] },
    },
    reason: {
      type: 'string',
      title: 'Reason',
      minLength: 3,
      'x-signalbox-type': 'text',
      'x-signalbox-order': 3,
      'x-signalbox-visible-when': { field: 'approve', values: ['true'] },
    },
    replicas: {
      type: 'integer',
      minimum: 1,
      maximum: 9,
      multipleOf: 1,
      default: 3,
      'x-signalbox-type': 'int',
      'x-signalbox-order': 4,
    },
    token: {
      type: 'string',
      'x-signalbox-type': 'secret',
      'x-signalbox-secret': true,
      'x-signalbox-order': 5,
    },
    labels: {
      type: 'object',
      additionalProperties: { type: 'string' },
      default: { team: 'ops' },
      'x-signalbox-type': 'kv',
      'x-signalbox-order': 6,
    },
    region: {
      type: 'string',
      oneOf: [],
      'x-signalbox-type': 'enum',
      'x-signalbox-order': 7,
      'x-signalbox-options-error': { code: 'not_found', params: { what: 'inventory' } },
    },
  },
};

describe('the run form of a survey schema', () => {
  const fields = formFields(doc);

  it('has one field per property, in x-signalbox-order, typed, with its rules and options', () => {
    expect(fields.map((f) => f.name)).toEqual([
      'env',
      'approve',
      'hosts',
      'reason',
      'replicas',
      'token',
      'labels',
      'region',
    ]);
    expect(fields[0]).toMatchObject({
      type: 'enum',
      title: 'Environment',
      description: 'Where to deploy',
      required: true,
      options: [
        { value: 'prod', label: 'Production' },
        { value: 'dev', label: 'Development' },
      ],
    });
    expect(fields[2]).toMatchObject({ type: 'multiselect', minItems: 1, maxItems: 2, required: true });
    expect(fields[2].options?.map((o) => o.label)).toEqual(['Web 1', 'Web 2']);
    expect(fields[4]).toMatchObject({ minimum: 1, maximum: 9, step: 1, title: 'replicas' });
    expect(fields[5].secret).toBe(true);
    expect(fields[7]).toMatchObject({ options: [], optionsError: { code: 'not_found' } });
  });

  it('shows a conditional field only while the field it names is shown and has one of its values', () => {
    const answers = initialAnswers(fields);
    expect(answers).toMatchObject({ env: 'dev', approve: false, hosts: [], replicas: '3' });
    expect(answers.labels).toEqual([{ key: 'team', value: 'ops' }]);
    expect(visibleFields(fields, answers).has('approve')).toBe(false);
    const prod = { ...answers, env: 'prod' };
    expect(visibleFields(fields, prod).has('approve')).toBe(true);
    expect(visibleFields(fields, prod).has('reason')).toBe(false);
    expect(visibleFields(fields, { ...prod, approve: true }).has('reason')).toBe(true);
    // Its condition's field hidden again: hidden too, whatever that field's answer still is.
    expect(visibleFields(fields, { ...prod, env: 'dev', approve: true }).has('reason')).toBe(false);
    // Any selected option of a multiselect counts.
    const onHosts = formFields({
      properties: {
        hosts: { 'x-signalbox-type': 'multiselect' },
        why: {
          'x-signalbox-type': 'string',
          'x-signalbox-visible-when': { field: 'hosts', values: ['web2'] },
        },
      },
    });
    expect(visibleFields(onHosts, { hosts: ['web1', 'web2'] }).has('why')).toBe(true);
    expect(visibleFields(onHosts, { hosts: ['web1'] }).has('why')).toBe(false);
  });

  it('sends the shown answers typed, secrets apart, and nothing for hidden or empty ones', () => {
    const answers = {
      ...initialAnswers(fields),
      env: 'prod',
      approve: true,
      reason: '  because\n',
      hosts: ['web2'],
      replicas: '4',
      token: ' s3cret ',
      labels: [
        { key: 'team', value: 'ops' },
        { key: '', value: '' },
      ],
    };
    expect(surveyBody(fields, answers)).toEqual({
      environment: {
        env: 'prod',
        approve: true,
        reason: '  because\n',
        hosts: ['web2'],
        replicas: 4,
        labels: { team: 'ops' },
      },
      secret: { token: 's3cret' },
    });
    const hidden = surveyBody(fields, { ...answers, env: 'dev', replicas: '', hosts: [] });
    expect(hidden.environment).toEqual({ env: 'dev', labels: { team: 'ops' } });
    // A number the browser let through as text goes as typed: the server names the problem.
    expect(surveyBody(fields, { ...answers, replicas: 'many' }).environment.replicas).toBe('many');
  });

  it('takes an earlier run’s answers but for secrets, and keeps a datetime’s offset', () => {
    expect(
      initialAnswers(fields, { env: 'prod', hosts: ['web1'], token: 'old', labels: { a: 'b' } }),
    ).toMatchObject({ env: 'prod', hosts: ['web1'], token: '', labels: [{ key: 'a', value: 'b' }] });
    const local = toLocalInput('2026-03-01T10:30:00Z');
    expect(new Date(fromLocalInput(local)).toISOString()).toBe('2026-03-01T10:30:00.000Z');
    expect(fromLocalInput(local)).toMatch(/^2026-03-01T\d\d:30:00[+-]\d\d:\d\d$/);
  });
});

describe('the run form of a survey built by surveyJsonSchema', () => {
  it('takes a conditional field’s rules from its allOf entry and keeps the variables’ order', () => {
    const v = (fields: Partial<TemplateSurveyVar>): TemplateSurveyVar => ({ ...emptySurveyVar, ...fields });
    const vars = [
      v({ name: 'target', title: 'Target', type: 'enum', values: [{ name: 'Production', value: 'prod' }] }),
      v({
        name: 'reason',
        title: 'Reason',
        type: 'text',
        required: true,
        min_length: 5,
        visible_when: { field: 'target', values: ['prod'] },
      }),
      v({ name: 'count', title: 'Count', type: 'int', min: 1, max: 3, default_value: '2' }),
    ];
    const options = new Map([['target', { options: [{ value: 'prod', label: 'Production' }] }]]);
    const fields = formFields(surveyJsonSchema(vars, options));
    expect(fields.map((f) => f.name)).toEqual(['target', 'reason', 'count']);
    expect(fields[1]).toMatchObject({
      type: 'text',
      required: true,
      minLength: 5,
      visibleWhen: { field: 'target', values: ['prod'] },
    });
    expect(fields[2]).toMatchObject({ minimum: 1, maximum: 3, default: 2 });
    expect(initialAnswers(fields).count).toBe('2');
    expect(visibleFields(fields, { target: 'prod' }).has('reason')).toBe(true);
    expect(surveyBody(fields, { target: '', reason: 'because', count: '2' }).environment).toEqual({
      count: 2,
    });
  });
});
