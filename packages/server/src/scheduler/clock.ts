/** Time as the scheduler sees it; tests pass a fake to drive cron ticks without waiting real minutes. */
export type Clock = {
  now(): Date;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
};

export const realClock: Clock = {
  now: () => new Date(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    timer.unref?.();
    return timer;
  },
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** setTimeout's ceiling; longer waits are split. */
export const MAX_DELAY = 2 ** 31 - 1;
