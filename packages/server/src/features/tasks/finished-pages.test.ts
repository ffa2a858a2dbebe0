import { describe, expect, it } from 'vitest';
import { type LogState, RECENT_LOG_STATE_MS, RecentLogStates } from './finished-pages';

const finished: LogState = { id: 5, status: 'success', end: '2026-12-03T08:00:00.000Z' };

/** A read that answers when the test says so, counting how often it was started. */
function pendingReads() {
  const finishers: ((state: LogState | undefined) => void)[] = [];
  const read = () =>
    new Promise<LogState | undefined>((resolve) => {
      finishers.push(resolve);
    });
  return { read, finishers };
}

describe('remembered log states', () => {
  it('readers asking while one read runs share it; a finished state is then remembered', async () => {
    let now = 1_000_000;
    const states = new RecentLogStates(() => now);
    const { read, finishers } = pendingReads();
    const asked = [states.through(1, 5, read), states.through(1, 5, read), states.through(1, 5, read)];
    expect(finishers).toHaveLength(1);
    finishers[0]!(finished);
    expect(await Promise.all(asked)).toEqual([finished, finished, finished]);
    expect(await states.through(1, 5, read)).toEqual(finished);
    expect(finishers).toHaveLength(1);
    now += RECENT_LOG_STATE_MS;
    void states.through(1, 5, read);
    expect(finishers).toHaveLength(2);
  });

  it('a running task is shared by concurrent readers but read again by the next one', async () => {
    const states = new RecentLogStates(() => 0);
    const { read, finishers } = pendingReads();
    const running: LogState = { id: 5, status: 'running', end: null };
    const asked = [states.through(1, 5, read), states.through(1, 5, read)];
    finishers[0]!(running);
    expect(await Promise.all(asked)).toEqual([running, running]);
    void states.through(1, 5, read);
    expect(finishers).toHaveLength(2);
  });

  it('after a forget, a reader waits for its own read and the older one is not remembered', async () => {
    const states = new RecentLogStates(() => 0);
    const { read, finishers } = pendingReads();
    const before = states.through(1, 5, read);
    states.forgetTask(1, 5); // the task was deleted while the first read ran
    const after = states.through(1, 5, read);
    expect(finishers).toHaveLength(2);
    finishers[0]!(finished);
    expect(await before).toEqual(finished);
    expect(states.get(1, 5)).toBeUndefined();
    finishers[1]!(undefined);
    expect(await after).toBeUndefined();
    expect(states.get(1, 5)).toBeUndefined();
  });
});
