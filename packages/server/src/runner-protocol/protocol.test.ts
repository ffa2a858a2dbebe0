import { describe, expect, it } from 'vitest';
import { helloProtocol, incompatibleReason, maxBatchLines, outputSchema, runnerProtocol } from './protocol';

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

describe("a hello's protocol version", () => {
  const hello = { type: 'hello', version: '1.2.3' };
  it('reads a missing version as 1, and any whole number from 1 as a version', () => {
    expect(helloProtocol(hello)).toEqual({ protocol: 1, version: '1.2.3' });
    expect(helloProtocol({ ...hello, protocol: 7, version: 'v'.repeat(100) })).toEqual({
      protocol: 7,
      version: 'v'.repeat(64),
    });
    expect(helloProtocol({ type: 'heartbeat', protocol: 7 })).toBeNull();
  });

  it.each([
    ['a string', '2'],
    ['a fraction', 1.5],
    ['zero', 0],
    ['a huge number', 2 ** 40],
    ['null', null],
  ])('leaves %s to the schema (an invalid hello, not another version)', (_what, protocol) => {
    expect(helloProtocol({ ...hello, protocol })).toBeNull();
  });

  it('names both versions in the close reason, within the 123 bytes a close reason may have', () => {
    const reason = incompatibleReason({ protocol: 2, version: '9.9.9' }, '0.1.0');
    expect(reason).toBe(
      `Runner protocol 2 (signalbox 9.9.9) is not supported: this server speaks protocol ${runnerProtocol} (signalbox 0.1.0)`,
    );
    const long = incompatibleReason({ protocol: 2, version: 'é'.repeat(64) }, '0.1.0');
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(123);
    expect(long).not.toContain('\uFFFD');
  });
});
