/**
 * What a client command writes: results on stdout (JSON with --json, else text for people), messages and the
 * progress spinner on stderr. The spinner turns only when both stdout and stderr are terminals and --json is off,
 * so a script or a pipe never gets its frames.
 */

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 80;

/** Escape sequences (ESC …), then any other control character but tab. */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
  /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]?|[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: a colour sequence (SGR) is ESC [ … m
const COLOUR = /^\u001b\[[0-9;]*m$/;

/**
 * A log line made safe for a terminal: colours are kept; every other escape sequence (titles, cursor moves, the
 * clipboard) and control character is dropped, so a task's output cannot drive the terminal that shows it.
 */
export function terminalSafe(line: string): string {
  return line.replace(UNSAFE, (found) => (COLOUR.test(found) ? found : ''));
}

export class Terminal {
  /** Whether people read this command's output: both streams are terminals and --json is off. */
  readonly interactive: boolean;
  private frame = 0;
  private text = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(readonly json: boolean) {
    this.interactive = !json && Boolean(process.stdout.isTTY) && Boolean(process.stderr.isTTY);
  }

  /** Shows (or changes) the spinner's text; nothing when no person watches. */
  spin(text: string) {
    if (!this.interactive) return;
    this.text = text;
    if (!this.timer) {
      this.timer = setInterval(() => this.draw(), FRAME_MS);
      this.timer.unref();
    }
    this.draw();
  }

  /** Takes the spinner off the screen. */
  stopSpinning() {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    process.stderr.write('\r\u001b[K');
  }

  private draw() {
    this.frame = (this.frame + 1) % FRAMES.length;
    process.stderr.write(`\r\u001b[K${FRAMES[this.frame]} ${this.text}`);
  }

  /** Writes a line of the result to stdout (above the spinner, which turns on below it). */
  out(line: string) {
    const spinning = this.timer !== null;
    if (spinning) process.stderr.write('\r\u001b[K');
    process.stdout.write(`${line}\n`);
    if (spinning) this.draw();
  }

  /** Writes a message for people to stderr (above the spinner). */
  say(line: string) {
    const spinning = this.timer !== null;
    process.stderr.write(`${spinning ? '\r\u001b[K' : ''}${line}\n`);
    if (spinning) this.draw();
  }

  /** Writes a value as one JSON document (or one line of JSON Lines) to stdout. */
  jsonOut(value: unknown) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  }
}

/** Rows of text as columns padded to their widest cell (the last column is not padded). */
export function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows].map((row) => row.map((cell) => terminalSafe(cell).replace(/\s+/g, ' ')));
  const widths = header.map((_, i) => Math.max(...all.map((row) => [...(row[i] ?? '')].length)));
  return all.map((row) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length),
      )
      .join('  ')
      .trimEnd(),
  );
}
