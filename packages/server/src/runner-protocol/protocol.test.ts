import type { PlanSummary } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import {
  finishedSchema,
  helloProtocol,
  incompatibleReason,
  maxBatchLines,
  maxPlanBytes,
  outputSchema,
  runnerProtocol,
  statusSchema,
} from './protocol';

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

describe('a plan summary from a runner', () => {
  const plan: PlanSummary = {
    format_version: '1.2',
    counts: { add: 1, change: 0, destroy: 0, replace: 0, read: 0, no_op: 0 },
    drift: 0,
    changes: [{ address: 'a.b', action: 'create', actions: ['create'], attributes: ['id'], sensitive: [] }],
    omitted: 0,
  };
  const status = (p: unknown) => ({ type: 'status', task_id: 3, status: 'waiting_confirmation', plan: p });
  const finished = (p: unknown) => ({
    type: 'finished',
    task_id: 3,
    status: 'success',
    last_seq: 0,
    plan: p,
  });

  it('goes with waiting_confirmation or with the end of the run', () => {
    expect(statusSchema.safeParse(status(plan)).success).toBe(true);
    expect(finishedSchema.safeParse(finished(plan)).success).toBe(true);
    expect(statusSchema.safeParse({ type: 'status', task_id: 3, status: 'running' }).success).toBe(true);
  });

  it('is refused when it is not a summary or is larger than a message may carry', () => {
    const big = { ...plan, changes: Array(8000).fill({ ...plan.changes[0], address: 'x'.repeat(1000) }) };
    expect(JSON.stringify(big).length).toBeGreaterThan(maxPlanBytes);
    for (const bad of [
      { ...plan, counts: { add: 'x' } },
      { ...plan, values: { password: 'p' } },
      'plan',
      big,
    ]) {
      expect(statusSchema.safeParse(status(bad)).success).toBe(false);
      expect(finishedSchema.safeParse(finished(bad)).success).toBe(false);
    }
  });
});
