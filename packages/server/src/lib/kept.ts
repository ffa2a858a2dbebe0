/** Kept entries by key, the oldest kept dropped first past `maxBytes` (each counted by its own `bytes`). */
export class Kept<K, V extends { bytes: number }> {
  private readonly entries = new Map<K, V>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V) {
    this.delete(key);
    this.entries.set(key, value);
    this.total += value.bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.total -= entry.bytes;
    }
  }

  delete(key: K) {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.total -= old.bytes;
  }
}
