import { describe, expect, it } from 'vitest';
import { maxBatchLines, outputSchema } from './protocol';

const batch = (lines: unknown) => ({ type: 'output', task_id: 3, seq: 1, lines });
const line = { time: '2026-11-28T10:00:00.000Z', output: 'ok' };

describe('an output batch from a runner', () => {
  it('takes 1 to maxBatchLines lines of exactly {time, output}', () => {
    expect(outputSchema.safeParse(batch([line])).success).toBe(true);
    expect(outputSchema.safeParse(batch(Array(maxBatchLines).fill(line))).success).toBe(true);
    expect(outputSchema.safeParse(batch([{ ...line, output: 'x'.repeat(1_000_000) }])).success).toBe(true);
  });

  it.each([
    ['no lines', []],
    ['too many lines', Array(maxBatchLines + 1).fill(line)],
    ['lines that are not a list', 'sekrit'],
    ['a line that is a string', ['text']],
    ['a line that is a list', [['a', 'b']]],
    ['a null line', [null]],
    ['an extra field', [{ ...line, extra: 1 }]],
    ['a prototype field', [JSON.parse('{"time":"t","output":"o","__proto__":{"x":1}}')]],
    ['no time', [{ output: 'o' }]],
    ['an empty time', [{ time: '', output: 'o' }]],
    ['a time too long', [{ time: 't'.repeat(41), output: 'o' }]],
    ['a number as output', [{ time: 't', output: 5 }]],
    ['an output too long', [{ time: 't', output: 'x'.repeat(1_000_001) }]],
  ])('refuses %s', (_what, lines) => {
    const parsed = outputSchema.safeParse(batch(lines));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path.join('.'))).toEqual(['lines']);
  });
});
