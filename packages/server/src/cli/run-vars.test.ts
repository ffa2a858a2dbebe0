import type { TemplateSurveyVar } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { UsageError } from './errors';
import { runAnswers } from './run-vars';

const v = (name: string, type: TemplateSurveyVar['type']) => ({ name, type }) as TemplateSurveyVar;
const survey = [
  v('count', 'int'),
  v('ratio', 'number'),
  v('dry', 'boolean'),
  v('regions', 'multiselect'),
  v('labels', 'kv'),
  v('password', 'secret'),
  v('note', 'text'),
];

describe('--var answers of a run', () => {
  it('types each survey answer as its variable, secrets apart, other names as text', () => {
    const answers = runAnswers(
      [
        'count=3',
        'ratio=0.5',
        'dry=true',
        'regions=eu, us',
        'labels={"team":"ops"}',
        'password=a=b=c',
        'note=42',
        'extra=7',
        'empty=',
      ],
      survey,
    );
    expect({ ...answers.environment }).toEqual({
      count: 3,
      ratio: 0.5,
      dry: true,
      regions: ['eu', 'us'],
      labels: { team: 'ops' },
      note: '42',
      extra: '7',
      empty: '',
    });
    // Only the first = splits: a value may hold more.
    expect({ ...answers.secret }).toEqual({ password: 'a=b=c' });
  });

  it('keeps text that does not read as its type, for the server to name the field', () => {
    const answers = runAnswers(['count=three', 'dry=maybe', 'regions=["eu"]'], survey);
    expect({ ...answers.environment }).toEqual({ count: 'three', dry: 'maybe', regions: ['eu'] });
  });

  it('takes __proto__ as a name like any other', () => {
    const answers = runAnswers(['__proto__=x'], []);
    expect(JSON.stringify(answers.environment)).toBe('{"__proto__":"x"}');
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('refuses an option without a name, or a name given twice, without echoing the value', () => {
    expect(() => runAnswers(['no-equals-sign-s3cret'], survey)).toThrow(UsageError);
    expect(() => runAnswers(['no-equals-sign-s3cret'], survey)).toThrow(/^--var takes name=value/);
    expect(() => runAnswers(['=value'], survey)).toThrow(UsageError);
    expect(() => runAnswers(['count=1', 'count=2'], survey)).toThrow('--var count is given twice');
    try {
      runAnswers(['no-equals-sign-s3cret'], survey);
    } catch (err) {
      expect((err as Error).message).not.toContain('s3cret');
    }
  });
});
