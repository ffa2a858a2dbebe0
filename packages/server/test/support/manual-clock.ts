import type { Clock } from '../../src/scheduler/clock';

/** A clock that only moves when told to: `advanceTo` runs every timer due on the way, in time order. */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: Date | string) {
    this.current = new Date(start).getTime();
  }
  now() {
    return new Date(this.current);
  }
  setTimer(fn: () => void, ms: number) {
    this.seq += 1;
    this.timers.set(this.seq, { at: this.current + Math.max(0, ms), fn });
    return this.seq;
  }
  clearTimer(handle: unknown) {
    this.timers.delete(handle as number);
  }
  get pending() {
    return this.timers.size;
  }
  advanceTo(target: Date | string) {
    const end = new Date(target).getTime();
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers)
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.current = Math.max(this.current, next[1].at);
      next[1].fn();
    }
    this.current = Math.max(this.current, end);
  }
  advance(ms: number) {
    this.advanceTo(new Date(this.current + ms));
  }
}
