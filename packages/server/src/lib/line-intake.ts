/** What a masked secret shows as in task output. */
export const MASK = '**********';

/**
 * The secrets to mask after adding `values` (longest first). Values shorter than 3 characters are not masked, and
 * each line of a multi-line secret (from 8 characters) is masked on its own too.
 */
export function withSecrets(
  current: readonly string[],
  values: Iterable<string | null | undefined>,
): string[] {
  const set = new Set(current);
  for (const v of values) {
    if (!v) continue;
    const text = String(v);
    if (text.trim().length >= 3) set.add(text);
    if (text.includes('\n')) {
      for (const part of text.split(/\r?\n/)) if (part.trim().length >= 8) set.add(part.trim());
    }
  }
  return [...set].sort((a, b) => b.length - a.length);
}

/** `text` with every one of `secrets` replaced by the mask. */
export function maskSecrets(secrets: readonly string[], text: string): string {
  for (const s of secrets) if (text.includes(s)) text = text.split(s).join(MASK);
  return text;
}

/** A line as every store keeps it: a NUL (which PostgreSQL text cannot hold) shown as U+FFFD on every database. */
export const withoutNul = (output: string) =>
  output.includes('\u0000') ? output.replaceAll('\u0000', '\uFFFD') : output;

/**
 * Where a task's output lines come in, wherever they are kept: watchers see each line as the task printed it, then
 * the line is masked (every registered secret), a NUL becomes U+FFFD (see withoutNul) and it is stamped with the
 * time it arrived, in ISO form, made once per millisecond. Subclasses keep the result: in the database (the
 * server's LogSink) or in batches sent to the server (a runner's TaskOutput).
 */
export abstract class LineIntake {
  private secrets: string[] = [];
  private watchers: ((line: string) => void)[] = [];
  private lastMs = 0;
  private lastTime = '';

  /** Registers values to mask in every later line (multi-line secrets are masked line by line too). */
  addSecrets(values: Iterable<string | null | undefined>) {
    this.secrets = withSecrets(this.secrets, values);
  }

  mask(text: string): string {
    return maskSecrets(this.secrets, text);
  }

  /** Lets an executor look at lines as they arrive (Terraform's "No changes."). */
  watch(listener: (line: string) => void): () => void {
    this.watchers.push(listener);
    return () => {
      this.watchers = this.watchers.filter((w) => w !== listener);
    };
  }

  line(text: string) {
    for (const w of this.watchers) w(text);
    const output = withoutNul(this.secrets.length ? this.mask(text) : text);
    const ms = Date.now();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTime = new Date(ms).toISOString();
    }
    this.keep(this.lastTime, output);
  }

  /**
   * Keeps one line, already masked and stamped. `time` is the same string object for every line of one
   * millisecond, so a keeper may compare it by identity to reuse what it made of it.
   */
  protected abstract keep(time: string, output: string): void;
}
