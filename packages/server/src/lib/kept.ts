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

type Joined = { parts: Buffer[]; body: Buffer; madeOf: string | null; bytes: number };

/**
 * The last answer joined per key (a list, its page and order), with the parts it joined: parts that are the very
 * same kept buffers in the same order are that answer again, returned without joining (copying) them anew. An
 * answer may also be tagged with the text of what it was made of (`madeOf`), so that a caller finding the same text
 * again takes the answer without making its parts. Answers are dropped oldest first past `maxBytes`.
 */
export class KeptJoins {
  private readonly byKey: Kept<string, Joined>;

  constructor(maxBytes: number) {
    this.byKey = new Kept(maxBytes);
  }

  /** The last answer under `key`, when it was tagged as made of `madeOf`. */
  madeOf(key: string, madeOf: string): Buffer | undefined {
    const last = this.byKey.get(key);
    return last && last.madeOf === madeOf ? last.body : undefined;
  }

  /** The parts joined, kept under `key` with what they were made of (null: not to be taken by `madeOf`). */
  join(key: string, parts: Buffer[], madeOf: string | null = null): Buffer {
    const last = this.byKey.get(key);
    const same =
      last && last.parts.length === parts.length && last.parts.every((part, i) => part === parts[i]);
    const body = same ? last.body : Buffer.concat(parts);
    if (!same || last.madeOf !== madeOf)
      this.byKey.set(key, { parts, body, madeOf, bytes: body.length + (madeOf?.length ?? 0) });
    return body;
  }
}
