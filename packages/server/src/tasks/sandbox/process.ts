import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { SandboxPath } from './confinement';
import { killGroup, launcher } from './launcher';
import type { TaskSandbox } from './sandbox';

/**
 * One command to run. `env` is the complete environment (nothing is inherited implicitly). `sandbox` is the
 * task's: the real adapter starts the command inside it and kills what the command leaves behind.
 */
export type ProcessSpec = {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  sandbox?: TaskSandbox;
  /** Paths only this command may see in a confined task (confinement.ts), e.g. the repository cache for a fetch. */
  binds?: SandboxPath[];
};

export type ExitResult = { code: number | null; signal: NodeJS.Signals | null };

/** Where a streamed process writes its lines; `pressure()` tells the reader to pause until `onDrain`. */
export interface LineTarget {
  line(text: string): void;
  /** True while the consumer holds too many unwritten lines. */
  pressure(): boolean;
  onDrain(callback: () => void): void;
}

/** maxBytes: stdout past this many bytes is not kept, and the result says `overflow` (default: all of it). */
export type CaptureOptions = { signal?: AbortSignal; timeoutMs?: number; maxBytes?: number };
export const CAPTURE_TIMEOUT_MS = 5 * 60_000;

export interface TaskProcess {
  /** Known once the command has started (a moment after `run` returns when a helper process starts it). */
  readonly pid: number | undefined;
  /** Resolves when the process has exited and both pipes are drained. */
  wait(): Promise<ExitResult>;
  /** Signals the whole process group. */
  kill(signal: NodeJS.Signals): void;
}

/**
 * The seam between the engine and the operating system (DESIGN.md): executors ask for processes here, tests
 * substitute a fake that records specs and scripts output.
 */
export interface ProcessAdapter {
  /**
   * Spawns in its own session and process group (inside `spec.sandbox` when given), streaming stdout+stderr
   * line by line into `target`.
   */
  run(spec: ProcessSpec, target: LineTarget): TaskProcess;
  /**
   * Runs a short helper command and captures its output (git rev-parse and the like). `signal` ends it early
   * (a stop request); it is killed after `timeoutMs` (default 5 minutes) so a helper can never hang a task.
   */
  capture(
    spec: ProcessSpec,
    input?: string,
    opts?: CaptureOptions,
  ): Promise<ExitResult & { stdout: string; stderr: string; overflow?: boolean }>;
}

/** Longest line stored as one row; longer lines are split rather than failing the task. */
export const MAX_LINE = 1024 * 1024;

/**
 * Splits a byte stream into lines (LF or CRLF), splitting over-long lines into MAX_LINE pieces. Only each new chunk
 * is searched for a line end; the unfinished line is kept as its parts, joined once it ends or reaches MAX_LINE (a
 * long line costs what its bytes do, not their square).
 */
export class LineSplitter {
  private decoder = new StringDecoder('utf8');
  private parts: string[] = [];
  private partsLength = 0;
  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer) {
    this.take(this.decoder.write(chunk));
  }

  end() {
    this.take(this.decoder.end());
    const line = this.parts.join('');
    this.parts = [];
    this.partsLength = 0;
    if (line.length) this.emitLine(line);
  }

  private take(text: string) {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      let line = text.slice(start, nl);
      if (this.parts.length) {
        this.parts.push(line);
        line = this.parts.join('');
        this.parts = [];
        this.partsLength = 0;
      }
      this.emitLine(line);
      start = nl + 1;
    }
    if (start === text.length) return;
    const rest = start ? text.slice(start) : text;
    this.parts.push(rest);
    this.partsLength += rest.length;
    if (this.partsLength < MAX_LINE) return;
    let joined = this.parts.join('');
    while (joined.length >= MAX_LINE) {
      this.emit(joined.slice(0, MAX_LINE));
      joined = joined.slice(MAX_LINE);
    }
    this.parts = joined.length ? [joined] : [];
    this.partsLength = joined.length;
  }

  private emitLine(line: string) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.length <= MAX_LINE) return this.emit(line);
    for (let i = 0; i < line.length; i += MAX_LINE) this.emit(line.slice(i, i + MAX_LINE));
  }
}

/**
 * How long the output pipes of a process that has exited may stay open with nothing coming before the rest is cut:
 * only a process that escaped the group can hold them so (pipes paused for the consumer never count).
 */
export const OUTPUT_IDLE_CUT_MS = 2000;
/**
 * How long they may be read after the exit, time paused for the consumer not counted, before the rest is cut: what
 * the process left in a pipe takes milliseconds, so output still coming then is written by a process that escaped.
 */
export const OUTPUT_AFTER_EXIT_CUT_MS = 10_000;

export const outputCutMessage =
  'The output was cut here: a process the task left behind kept it open after the task ended';

type Pipe = {
  /** Resolves at the end of the stream (everything read) or once it is cut. */
  done: Promise<void>;
  ended: boolean;
  /** Milliseconds since the last data, 0 while the consumer holds the stream paused. */
  idleMs(): number;
  /** Milliseconds the consumer has held the stream paused so far. */
  pausedMs(): number;
  /** Stops reading: the partial last line is delivered, nothing after it. */
  cut(): void;
};

function pipeLines(stream: Readable, target: LineTarget): Pipe {
  const splitter = new LineSplitter((line) => target.line(line));
  let last = Date.now();
  let paused = false;
  let pausedAt = 0;
  let pausedBefore = 0;
  let resolveDone: () => void = () => {};
  const pipe: Pipe = {
    done: new Promise<void>((resolve) => {
      resolveDone = resolve;
    }),
    ended: false,
    idleMs: () => (paused ? 0 : Date.now() - last),
    pausedMs: () => pausedBefore + (paused ? Date.now() - pausedAt : 0),
    cut() {
      if (pipe.ended) return;
      pipe.ended = true;
      stream.destroy();
      splitter.end();
      resolveDone();
    },
  };
  const end = () => {
    if (pipe.ended) return;
    pipe.ended = true;
    splitter.end();
    resolveDone();
  };
  stream.on('data', (chunk: Buffer) => {
    if (pipe.ended) return;
    last = Date.now();
    splitter.push(chunk);
    if (!target.pressure()) return;
    // Paused again on every chunk: Node resumes a child's pipes by itself when the child exits.
    stream.pause();
    if (paused) return;
    paused = true;
    pausedAt = Date.now();
    target.onDrain(() => {
      paused = false;
      last = Date.now();
      pausedBefore += last - pausedAt;
      stream.resume();
    });
  });
  stream.on('end', end);
  stream.on('error', end);
  return pipe;
}

/**
 * Waits until the pipes are read to their end. Pipes the consumer holds paused (a slow database, a runner waiting
 * for acknowledgements) are waited for however long that takes. Pipes that a process escaped from the group keeps
 * open are cut, and the cut is said as a line: once they stay silent for OUTPUT_IDLE_CUT_MS after `exitedAt`, or
 * are still read OUTPUT_AFTER_EXIT_CUT_MS after it (time paused for the consumer not counted).
 */
async function drainPipes(pipes: Pipe[], target: LineTarget, exitedAt: number) {
  const pausedAtExit = pipes.map((p) => p.pausedMs());
  for (;;) {
    const open = pipes.filter((p) => !p.ended);
    if (!open.length) return;
    const now = Date.now();
    const idle = Math.min(now - exitedAt, ...open.map((p) => p.idleMs()));
    // A pipe the consumer holds paused is waited for: the others are cut only once it has ended.
    const read = Math.min(
      ...pipes.flatMap((p, i) => (p.ended ? [] : [now - exitedAt - (p.pausedMs() - (pausedAtExit[i] ?? 0))])),
    );
    if (idle >= OUTPUT_IDLE_CUT_MS || read >= OUTPUT_AFTER_EXIT_CUT_MS) {
      for (const p of open) p.cut();
      target.line(outputCutMessage);
      return;
    }
    const wait = Math.min(OUTPUT_IDLE_CUT_MS - idle, OUTPUT_AFTER_EXIT_CUT_MS - read);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(open.map((p) => p.done)),
      new Promise((r) => {
        timer = setTimeout(r, Math.max(wait, 50)).unref();
      }),
    ]);
    clearTimeout(timer);
  }
}

/**
 * The real adapter: each command is its own session and process group (`detached`), started in the task's sandbox
 * when the spec names one, from the launcher's helper process (launcher.ts) so that the fork never holds the
 * server's event loop.
 */
export const systemProcesses: ProcessAdapter = {
  run(spec, target) {
    const unit = spec.sandbox?.enter(spec.command, spec.args, { cwd: spec.cwd, binds: spec.binds });
    let pid: number | undefined;
    let spawnError: Error | null = null;
    /** A signal asked for before the command had started: sent once it has. */
    let early: NodeJS.Signals | null = null;
    const pipes: Pipe[] = [];
    let resolveExit: (result: ExitResult) => void = () => {};
    const exited = new Promise<ExitResult>((resolve) => {
      resolveExit = resolve;
    });
    const signal = (sig: NodeJS.Signals) => {
      if (unit?.signal) unit.signal(sig);
      else killGroup(pid, sig);
    };
    launcher.launch(
      unit?.command ?? spec.command,
      unit?.args ?? spec.args,
      { cwd: spec.cwd, env: spec.env, stdin: false },
      {
        spawned(started) {
          pid = started;
          unit?.started(started);
          if (early) signal(early);
        },
        output(_name, stream) {
          pipes.push(pipeLines(stream, target));
        },
        failed(err) {
          spawnError = err;
          void unit?.release();
          resolveExit({ code: 127, signal: null });
        },
        async exited(code, sig) {
          // Whatever the main process left behind, in its group or escaped from it, goes with it.
          killGroup(pid, 'SIGKILL');
          await unit?.release();
          resolveExit({ code, signal: sig });
        },
      },
    );
    return {
      get pid() {
        return pid;
      },
      async wait() {
        const result = await exited;
        // Every line is read before the task may end; only pipes a grandchild that escaped the group holds open
        // are cut (see drainPipes).
        await drainPipes(pipes, target, Date.now());
        if (spawnError) target.line(`Cannot run ${spec.command}: ${(spawnError as Error).message}`);
        return result;
      },
      kill(sig) {
        if (pid === undefined) early = sig;
        else signal(sig);
      },
    };
  },

  capture(spec, input, opts = {}) {
    return new Promise((resolve) => {
      const unit = spec.sandbox?.enter(spec.command, spec.args, { cwd: spec.cwd, binds: spec.binds });
      let pid: number | undefined;
      let released: Promise<void> | undefined;
      let exit: ExitResult | null = null;
      let open = 0;
      let stdin: Writable | null = null;
      /** The command is killed (SIGKILL, its main process) at the timeout or a stop, once it has started. */
      let doomed = false;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outBytes = 0;
      let overflow = false;
      const end = (result: Awaited<ReturnType<ProcessAdapter['capture']>>) => {
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', stop);
        resolve(result);
      };
      const finish = async () => {
        if (!exit || open) return;
        const { code, signal } = exit;
        exit = null;
        await released;
        end({
          code,
          signal,
          stdout: overflow ? '' : Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          ...(overflow ? { overflow } : {}),
        });
      };
      const launched = launcher.launch(
        unit?.command ?? spec.command,
        unit?.args ?? spec.args,
        { cwd: spec.cwd, env: spec.env, stdin: input !== undefined },
        {
          spawned(started) {
            pid = started;
            unit?.started(started);
            if (doomed) queueMicrotask(stop);
          },
          output(name, stream) {
            open++;
            if (name === 'stdout')
              stream.on('data', (b: Buffer) => {
                outBytes += b.length;
                if (opts.maxBytes !== undefined && outBytes > opts.maxBytes) overflow = true;
                else out.push(b);
              });
            else stream.on('data', (b: Buffer) => err.push(b));
            stream.once('close', () => {
              open--;
              void finish();
            });
          },
          input(stream) {
            stdin = stream;
            // A command that exits without reading its input (ssh-add that cannot reach its agent) closes the pipe:
            // the write's EPIPE is that command's failure, reported by its exit code, never an error of the server.
            stream.on('error', () => {});
            if (input !== undefined) stream.end(input);
          },
          failed(e) {
            released ??= unit?.release();
            end({ code: 127, signal: null, stdout: '', stderr: e.message });
          },
          exited(code, signal) {
            killGroup(pid, 'SIGKILL');
            released ??= unit?.release();
            stdin?.destroy();
            exit = { code, signal };
            void finish();
          },
        },
      );
      function stop() {
        doomed = true;
        if (pid !== undefined) launched.kill('SIGKILL');
      }
      const timer = setTimeout(stop, opts.timeoutMs ?? CAPTURE_TIMEOUT_MS);
      if (opts.signal?.aborted) stop();
      else opts.signal?.addEventListener('abort', stop, { once: true });
    });
  },
};
