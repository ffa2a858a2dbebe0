import { afterEach, describe, expect, it, vi } from 'vitest';
import { MASK } from '../../lib/line-intake';
import { outputSchema } from '../../runner-protocol/protocol';
import { type Batch, FLUSH_MS, MAX_UNACKED_BYTES, type OutputLine, TaskOutput } from './output';

/** A batch's lines as the server reads them. */
const linesOf = (batch: Batch) => JSON.parse(batch.json) as OutputLine[];

function output() {
  const sent: Batch[] = [];
  return { out: new TaskOutput((b) => sent.push(b)), sent };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('TaskOutput', () => {
  it('numbers batches 1, 2, 3 and cuts them at 1,000 lines or after the flush delay', () => {
    vi.useFakeTimers();
    const { out, sent } = output();
    for (let i = 1; i <= 2500; i++) out.line(`line ${i}`);
    expect(sent.map((b) => [b.seq, b.count, linesOf(b).length])).toEqual([
      [1, 1000, 1000],
      [2, 1000, 1000],
    ]);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(sent.map((b) => b.seq)).toEqual([1, 2, 3]);
    expect(sent.flatMap((b) => linesOf(b).map((l) => l.output))).toEqual(
      Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`),
    );
    expect(out.lastSeq).toBe(3);
  });

  it('cuts a batch at 256 KiB and splits a line longer than the protocol takes', () => {
    const { out, sent } = output();
    out.line('x'.repeat(200_000));
    out.line('y'.repeat(100_000));
    expect(sent).toHaveLength(1);
    out.line('z'.repeat(2_500_000));
    out.flush();
    const lengths = sent.flatMap((b) => linesOf(b).map((l) => l.output.length));
    expect(lengths).toEqual([200_000, 100_000, 1_000_000, 1_000_000, 500_000]);
    expect(Math.max(...sent.map((b) => b.bytes))).toBeLessThan(1_100_000);
  });

  it('keeps every batch until acknowledged and lists the rest in order for a resend', () => {
    const { out } = output();
    for (let i = 0; i < 5; i++) {
      out.line(`l${i}`);
      out.flush();
    }
    expect(out.unacknowledged().map((b) => b.seq)).toEqual([1, 2, 3, 4, 5]);
    out.ack(3);
    expect(out.unacknowledged().map((b) => b.seq)).toEqual([4, 5]);
    // An old ack changes nothing; one beyond what was made counts up to the last batch only.
    out.ack(2);
    expect(out.unacknowledged().map((b) => b.seq)).toEqual([4, 5]);
    out.ack(99);
    expect(out.unacknowledged()).toEqual([]);
    expect(out.acked).toBe(5);
  });

  it('carries any text as the server reads it, in a message its schema takes', () => {
    const { out, sent } = output();
    const texts = [
      'quote " backslash \\ tab \t',
      'control \u0001\u001f',
      'lone \ud800 surrogate',
      '€ 漢字 😀',
      '',
    ];
    for (const text of texts) out.line(text);
    out.flush();
    const batch = sent[0] as Batch;
    expect(linesOf(batch).map((l) => l.output)).toEqual(texts);
    const message = JSON.parse(`{"type":"output","task_id":4,"seq":${batch.seq},"lines":${batch.json}}`);
    expect(outputSchema.safeParse(message).success).toBe(true);
    expect(Date.parse(linesOf(batch)[0]?.time ?? '')).toBeGreaterThan(0);
  });

  it('masks secrets, whole and line by line', () => {
    const { out, sent } = output();
    out.addSecrets(['hunter22', 'first-line-secret\nsecond-line-secret', '', null]);
    out.line('pw=hunter22 and second-line-secret');
    out.flush();
    expect(linesOf(sent[0] as Batch)[0]?.output).toBe(`pw=${MASK} and ${MASK}`);
  });

  it('says pressure above the unacknowledged cap and resumes readers once acks bring it under half', () => {
    const { out } = output();
    const chunk = 'x'.repeat(200_000);
    let lines = 0;
    while (!out.pressure()) {
      out.line(chunk);
      lines++;
    }
    expect(lines * 200_000).toBeGreaterThan(MAX_UNACKED_BYTES * 0.9);
    const resumed = vi.fn();
    out.onDrain(resumed);
    out.flush();
    out.ack(Math.floor(out.lastSeq / 4));
    expect(resumed).not.toHaveBeenCalled();
    out.ack(out.lastSeq);
    expect(resumed).toHaveBeenCalledOnce();
    expect(out.pressure()).toBe(false);
  });
});
