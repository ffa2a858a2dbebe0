import { describe, expect, it } from 'vitest';
import { TurnShared } from './turn-shared';

/** A run that counts its starts and answers what `value()` is when it starts. */
function counted(value: () => number) {
  const run = {
    starts: 0,
    fn: async () => {
      run.starts++;
      return value();
    },
  };
  return run;
}

describe('TurnShared', () => {
  it('runs once for the callers of one turn, per key', async () => {
    const shared = new TurnShared<string, number>();
    const a = counted(() => 1);
    const b = counted(() => 2);
    const answers = await Promise.all([
      shared.get('a', a.fn),
      shared.get('a', a.fn),
      shared.get('b', b.fn),
      shared.get('a', a.fn),
    ]);
    expect(answers).toEqual([1, 1, 2, 1]);
    expect([a.starts, b.starts]).toEqual([1, 1]);
  });

  it('answers a caller who asks once the run has started by a run of its own, begun after it asked', async () => {
    const shared = new TurnShared<string, number>();
    let state = 1;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let starts = 0;
    const run = async () => {
      starts++;
      const seen = state;
      await gate;
      return seen;
    };
    const first = shared.get('k', run);
    // The first run starts at the end of this turn; what changes after that, a later caller must see.
    await new Promise(setImmediate);
    expect(starts).toBe(1);
    state = 2;
    const second = shared.get('k', run);
    release();
    expect(await first).toBe(1);
    expect(await second).toBe(2);
    expect(starts).toBe(2);
  });

  it('hands a failure to every caller that shared the run, and runs again for the next', async () => {
    const shared = new TurnShared<string, number>();
    let fail = true;
    const run = async () => {
      if (fail) throw new Error('database gone');
      return 7;
    };
    const results = await Promise.allSettled([shared.get('k', run), shared.get('k', run)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await shared.get('k', run)).toBe(7);
  });
});
