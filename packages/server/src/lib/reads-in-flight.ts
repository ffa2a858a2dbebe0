/**
 * Reads running now, shared by every caller that asks for the same key while one runs — when a remembered lookup
 * lapses under 50 clients, one database read instead of 50. A change announced meanwhile (`forget`) starts a new
 * generation: a caller asking after it waits for a read of its own, and the older read's answer reaches its own
 * callers but is not to be remembered (`settled` is told whether it still may).
 */
export class ReadsInFlight<K, V> {
  private readonly running = new Map<K, { generation: number; value: Promise<V | undefined> }>();
  private generation = 0;

  /**
   * The running read of `key`, or `read()` started now; `settled(found, current)` runs once before any caller
   * sees a found value (`current`: no forget came since the read began) and returns what the callers get.
   */
  get(
    key: K,
    read: () => Promise<V | undefined>,
    settled: (found: V, current: boolean) => V,
  ): Promise<V | undefined> {
    const running = this.running.get(key);
    if (running && running.generation === this.generation) return running.value;
    const generation = this.generation;
    const value = read()
      .then((found) => (found === undefined ? found : settled(found, generation === this.generation)))
      .finally(() => {
        if (this.running.get(key)?.value === value) this.running.delete(key);
      });
    this.running.set(key, { generation, value });
    return value;
  }

  /** A change was announced: reads running now may hold what it changed. */
  forget() {
    this.generation += 1;
  }
}
