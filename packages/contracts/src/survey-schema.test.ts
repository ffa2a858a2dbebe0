import { describe, expect, it } from 'vitest';
import { surveyFields, surveyJsonSchema, surveyVisibility, typedSurveyDefault } from './survey-schema';
import { emptySurveyVar, type TemplateSurveyVar } from './surveys';

const v = (name: string, extra: Partial<TemplateSurveyVar>): TemplateSurveyVar => ({
  ...emptySurveyVar,
  name,
  title: name,
  ...extra,
});

describe('survey schema documents', () => {
  it('reads defaults as typed values, keeping text that does not read as its type', () => {
    const typed = (type: TemplateSurveyVar['type'], default_value: string) =>
      typedSurveyDefault({ type, default_value });
    expect(typed('int', ' -42 ')).toBe(-42);
    expect(typed('int', '4.5')).toBe('4.5');
    expect(typed('number', '2.5')).toBe(2.5);
    expect(typed('number', 'abc')).toBe('abc');
    expect(typed('boolean', 'false')).toBe(false);
    expect(typed('boolean', 'yes')).toBe('yes');
    expect(typed('multiselect', '["a","b"]')).toEqual(['a', 'b']);
    expect(typed('multiselect', '{"a":1}')).toBe('{"a":1}');
    expect(typed('kv', '{"k":"v"}')).toEqual({ k: 'v' });
    expect(typed('kv', '[1]')).toBe('[1]');
    expect(typed('string', '5')).toBe('5');
  });

  it('gives each field its annotations and rules in order, a conditional one from its allOf entry', () => {
    const doc = surveyJsonSchema(
      [
        v('mode', { type: 'enum', values: [{ name: 'Safe', value: 'safe' }] }),
        v('depth', {
          type: 'int',
          min: 1,
          required: true,
          visible_when: { field: 'mode', values: ['safe'] },
        }),
        v('host', { regex: '(', min_length: 2 }),
        v('zone', { type: 'enum', options_source: { type: 'option_list', option_list_id: 1 } }),
      ],
      new Map([
        ['mode', { options: [{ value: 'safe', label: 'Safe' }] }],
        ['zone', { error: { code: 'not_found', params: { what: 'option_list' } } }],
      ]),
    );
    // The conditional variable's rules are not in its property: a hidden one is not checked.
    expect(doc.properties.depth).not.toHaveProperty('minimum');
    expect(doc.required).toBeUndefined();
    const fields = surveyFields(doc);
    expect(fields.map((f) => [f.name, f.type])).toEqual([
      ['mode', 'enum'],
      ['depth', 'int'],
      ['host', 'string'],
      ['zone', 'enum'],
    ]);
    expect(fields[1]?.schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      'x-signalbox-visible-when': { field: 'mode' },
    });
    // A regex that does not compile is left out; the other rules stay.
    expect(fields[2]?.schema).toMatchObject({ minLength: 2 });
    expect(fields[2]?.schema).not.toHaveProperty('pattern');
    expect(fields[3]?.schema).toMatchObject({ not: {}, 'x-signalbox-options-error': { code: 'not_found' } });
  });

  it('shows a variable while its field, itself shown, has one of the values, defaults counting', () => {
    const vars = [
      v('a', { type: 'boolean', required: true, default_value: 'true' }),
      v('b', { type: 'multiselect', visible_when: { field: 'a', values: ['true'] } }),
      v('c', { visible_when: { field: 'b', values: ['x'] } }),
    ];
    const shown = (answers: Record<string, unknown>) => Object.fromEntries(surveyVisibility(vars, answers));
    expect(shown({})).toEqual({ a: true, b: true, c: false });
    expect(shown({ b: ['y', 'x'] })).toEqual({ a: true, b: true, c: true });
    expect(shown({ a: false, b: ['x'] })).toEqual({ a: true, b: false, c: false });
    expect(shown({ a: '', b: ['x'] })).toEqual({ a: true, b: true, c: true });
  });
  it('keeps a variable named __proto__ as a property of its own', () => {
    const doc = surveyJsonSchema([v('__proto__', { required: true, min_length: 2 })], new Map());
    expect(Object.keys(doc.properties)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(doc.properties)).toBe(Object.prototype);
    expect(JSON.stringify(doc)).toContain('"__proto__":{');
  });
});
