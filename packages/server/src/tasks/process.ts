import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { SandboxPath } from './confinement';
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

export type CaptureOptions = { signal?: AbortSignal; timeoutMs?: number };
export const CAPTURE_TIMEOUT_MS = 5 * 60_000;

export interface TaskProcess {
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
  ): Promise<ExitResult & { stdout: string; stderr: string }>;
}

/** Longest line stored as one row; longer lines are split rather than failing the task. */
export const MAX_LINE = 1024 * 1024;

/** Splits a byte stream into lines (LF or CRLF), splitting over-long lines into MAX_LINE pieces. */
export class LineSplitter {
  private decoder = new StringDecoder('utf8');
  private rest = '';
  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer) {
    let text = this.rest + this.decoder.write(chunk);
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      this.emitLine(text.slice(start, nl));
      start = nl + 1;
    }
    text = start ? text.slice(start) : text;
    while (text.length >= MAX_LINE) {
      this.emit(text.slice(0, MAX_LINE));
      text = text.slice(MAX_LINE);
    }
    this.rest = text;
  }

  end() {
    const text = this.rest + this.decoder.end();
    this.rest = '';
    if (text.length) this.emitLine(text);
  }

  private emitLine(line: string) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.length <= MAX_LINE) return this.emit(line);
    for (let i = 0; i < line.length; i += MAX_LINE) this.emit(line.slice(i, i + MAX_LINE));
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

function pipeLines(stream: Readable, target: LineTarget): Promise<void> {
  const splitter = new LineSplitter((line) => target.line(line));
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      splitter.push(chunk);
      if (target.pressure()) {
        stream.pause();
        target.onDrain(() => stream.resume());
      }
    });
    stream.on('end', () => {
      splitter.end();
      resolve();
    });
    stream.on('error', () => resolve());
  });
}

/**
 * The real adapter: child_process with `detached` so each command is its own session and process group, started
 * in the task's sandbox when the spec names one.
 */
export const systemProcesses: ProcessAdapter = {
  run(spec, target) {
    const unit = spec.sandbox?.enter(spec.command, spec.args, { cwd: spec.cwd, binds: spec.binds });
    const child = spawn(unit?.command ?? spec.command, unit?.args ?? spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid) unit?.started(pid);
    let spawnError: Error | null = null;
    const exited = new Promise<ExitResult>((resolve) => {
      child.on('error', (err) => {
        spawnError = err;
        void unit?.release();
        resolve({ code: 127, signal: null });
      });
      child.on('exit', async (code, signal) => {
        // Whatever the main process left behind, in its group or escaped from it, goes with it.
        killGroup(pid, 'SIGKILL');
        await unit?.release();
        resolve({ code, signal });
      });
    });
    const drained = Promise.all([pipeLines(child.stdout, target), pipeLines(child.stderr, target)]);
    return {
      pid,
      async wait() {
        const result = await exited;
        // A grandchild that escaped the group could hold the pipes open; do not wait on it forever.
        await Promise.race([drained, new Promise((r) => setTimeout(r, 2000).unref())]);
        if (spawnError) target.line(`Cannot run ${spec.command}: ${(spawnError as Error).message}`);
        return result;
      },
      kill(signal) {
        if (unit?.signal) unit.signal(signal);
        else killGroup(pid, signal);
      },
    };
  },

  capture(spec, input, opts = {}) {
    return new Promise((resolve) => {
      const unit = spec.sandbox?.enter(spec.command, spec.args, { cwd: spec.cwd, binds: spec.binds });
      const child = spawn(unit?.command ?? spec.command, unit?.args ?? spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        detached: true,
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        signal: opts.signal,
        timeout: opts.timeoutMs ?? CAPTURE_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      });
      const pid = child.pid;
      if (pid) unit?.started(pid);
      let released: Promise<void> | undefined;
      child.on('exit', () => {
        killGroup(pid, 'SIGKILL');
        released ??= unit?.release();
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout?.on('data', (b: Buffer) => out.push(b));
      child.stderr?.on('data', (b: Buffer) => err.push(b));
      if (input !== undefined) child.stdin?.end(input);
      child.on('error', (e) => {
        released ??= unit?.release();
        resolve({ code: 127, signal: null, stdout: '', stderr: String((e as Error).message) });
      });
      child.on('close', async (code, signal) => {
        await released;
        resolve({
          code,
          signal,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
        });
      });
    });
  },
};
