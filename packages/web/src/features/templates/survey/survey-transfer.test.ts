import { readIssue } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { codeZodIssues } from '../../../i18n/messages';
import { exportSurvey, importSurvey } from './survey-transfer';

codeZodIssues();

describe('survey import and export', () => {
  it('reads back what it exported', () => {
    const vars = [
      {
        name: 'target',
        title: 'Target',
        type: 'enum',
        values: [{ name: 'Production', value: 'prod' }],
        visible_when: null,
      },
      {
        name: 'approve',
        title: 'Approve',
        type: 'boolean',
        visible_when: { field: 'target', values: ['prod'] },
      },
    ];
    const first = importSurvey(JSON.stringify(vars));
    if (!('vars' in first)) throw new Error(JSON.stringify(first.problems));
    const again = importSurvey(exportSurvey(first.vars));
    expect(again).toEqual(first);
    expect(first.vars[1]).toMatchObject({
      type: 'boolean',
      visible_when: { field: 'target', values: ['prod'] },
    });
  });

  it('names each problem by its code and where it is', () => {
    const codes = (text: string) => {
      const result = importSurvey(text);
      if (!('problems' in result)) throw new Error('imported');
      return result.problems.map((p) => [p.path, readIssue(p.message)?.code]);
    };
    expect(codes('{not json')).toEqual([['', 'invalid_json']]);
    expect(codes('{"name": "x"}')).toEqual([['', 'not_json_array']]);
    expect(
      codes(
        JSON.stringify([
          { name: 'ok', title: 'OK' },
          { name: 'colour', title: 'Colour', type: 'enum', values: [] },
        ]),
      ),
    ).toEqual([['1.values', 'enum_needs_values']]);
    expect(codes(JSON.stringify([{ name: 'x', title: 'X', type: 'colour' }]))[0]?.[0]).toBe('0.type');
  });
});
