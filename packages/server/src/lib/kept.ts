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

type Joined = { parts: Buffer[]; body: Buffer; bytes: number };

/**
 * The last answer joined per key (a list, its page and order), with the parts it joined: parts that are the very
 * same kept buffers in the same order are that answer again, returned without joining (copying) them anew. Answers
 * are dropped oldest first past `maxBytes`.
 */
export class KeptJoins {
  private readonly byKey: Kept<string, Joined>;

  constructor(maxBytes: number) {
    this.byKey = new Kept(maxBytes);
  }

  join(key: string, parts: Buffer[]): Buffer {
    const last = this.byKey.get(key);
    if (last && last.parts.length === parts.length && last.parts.every((part, i) => part === parts[i]))
      return last.body;
    const body = Buffer.concat(parts);
    this.byKey.set(key, { parts, body, bytes: body.length });
    return body;
  }
}
