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

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The parts of a JSON array of items that are JSON bytes already: brackets and commas between them. */
export function jsonArrayParts(items: Iterable<Buffer>): Buffer[] {
  const parts: Buffer[] = [OPEN];
  for (const item of items) {
    if (parts.length > 1) parts.push(COMMA);
    parts.push(item);
  }
  parts.push(CLOSE);
  return parts;
}
