/**
 * Failed sign-ins are limited per login and per client address: after `max` failures inside `windowMs`
 * further attempts are refused until the window passes. A success clears the login's count.
 */
export class FailureLimiter {
  private failures = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds until the key may try again, or 0. */
  blockedFor(key: string, at = Date.now()): number {
    const recent = this.recent(key, at);
    if (recent.length < this.max) return 0;
    return recent[0]! + this.windowMs - at;
  }

  fail(key: string, at = Date.now()) {
    const recent = this.recent(key, at);
    recent.push(at);
    this.failures.set(key, recent);
    if (this.failures.size > 100_000) this.prune(at);
  }

  clear(key: string) {
    this.failures.delete(key);
  }

  private recent(key: string, at: number) {
    return (this.failures.get(key) ?? []).filter((t) => at - t < this.windowMs);
  }

  private prune(at: number) {
    for (const [key, times] of this.failures) {
      if (times.every((t) => at - t >= this.windowMs)) this.failures.delete(key);
    }
  }
}
