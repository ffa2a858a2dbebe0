import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';

/**
 * Starts commands from a small helper process instead of the server itself.
 *
 * Node's spawn forks the calling process and waits until the child has called exec. The fork copies the page tables
 * of all the caller's memory and the child's exec tears the copy down again, so the wait grows with the caller's
 * size: from a 150–350 MB server it held the event loop 12–30 ms per command on a 2-core virtual machine (6 ms from
 * a 50 MB process), and every other request waited with it. The helper is a bare Node process with no module of
 * ours: it forks in the time a small process does, off the server's event loop, and hands each child's pipes back
 * over its IPC channel (the descriptors themselves, never the data), then the child's pid, and its exit code and
 * signal when it exits. The server reads the pipes as if it had spawned the command.
 *
 * The helper is started with the first command and stops after IDLE_MS without any; until it is ready, and if it
 * fails, commands are spawned by the server directly as before. It exits when the server's end of the channel
 * closes (so it never outlives the server), and what it started is the server's to signal, by pid and group: every
 * command is its own session and group (`detached`), as when the server spawned it.
 */

export type LaunchOptions = { cwd: string; env: Record<string, string>; stdin: boolean };

/**
 * What the caller hears of a launched command, in this order: that it runs, each of its pipes, then its exit; or only
 * that it could not start. A pipe is handed over the moment it exists: a listener added later could miss its end.
 */
export interface LaunchHandlers {
  /** The command runs, as `pid`. */
  spawned(pid: number): void;
  /** Its stdout and its stderr. */
  output(name: 'stdout' | 'stderr', stream: Readable): void;
  /** Its stdin, when asked for. */
  input?(stream: Writable): void;
  /** It could not be started (a missing program, a missing directory): exec's error, as spawn reports it. */
  failed(err: Error): void;
  /** It exited, or the helper that watched it ended (code null, SIGKILL: the command's group has been killed). */
  exited(code: number | null, signal: NodeJS.Signals | null): void;
}

export interface Launched {
  /** Sends `signal` to the command's main process while it runs (not its group: the caller signals that by pid). */
  kill(signal: NodeJS.Signals): void;
}

/** Milliseconds without a command after which the helper exits (started again with the next command). */
export const IDLE_MS = 5 * 60_000;
/** Helpers that may end unasked within CRASH_WINDOW_MS before commands are spawned directly for good. */
const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 60_000;

type LaunchRequest = {
  id: number;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: boolean;
};
type Reply =
  | { ready: true }
  | { id: number; pid: number; stream: 'stdout' | 'stderr' | 'stdin' }
  | { id: number; error: { message: string; code?: string; errno?: number; syscall?: string; path?: string } }
  | { id: number; exit: { code: number | null; signal: NodeJS.Signals | null } };

/**
 * The helper's whole program, run as `node -e "(<this function's source>)(require)"`: it may use nothing from this
 * module's scope. Each child's pipe sockets stop reading before they are sent (the send keeps the descriptor open
 * in the helper until the server acknowledges it, and a socket still reading would swallow the first output).
 */
export function launcherProgram(load: NodeJS.Require) {
  const { spawn: start } = load('node:child_process') as typeof import('node:child_process');
  const running = new Map<number, ChildProcess>();
  const send = (message: Reply, handle?: Socket) => {
    // A server gone meanwhile is no error: the helper exits on the disconnect that follows.
    if (process.connected) process.send?.(message, handle, undefined, () => {});
  };
  const describe = (err: NodeJS.ErrnoException) => ({
    message: err.message,
    code: err.code,
    errno: err.errno,
    syscall: err.syscall,
    path: err.path,
  });
  const quiet = (socket: Readable | Writable | null) => {
    (socket as unknown as { _handle?: { readStop?(): number } } | null)?._handle?.readStop?.();
  };
  process.on('message', (m: LaunchRequest | { id: number; kill: NodeJS.Signals }) => {
    if ('kill' in m) {
      running.get(m.id)?.kill(m.kill);
      return;
    }
    let child: ChildProcess;
    try {
      child = start(m.command, m.args, {
        cwd: m.cwd,
        env: m.env,
        detached: true,
        stdio: [m.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      send({ id: m.id, error: describe(err as NodeJS.ErrnoException) });
      return;
    }
    if (child.pid === undefined) {
      child.on('error', (err) => send({ id: m.id, error: describe(err) }));
      return;
    }
    quiet(child.stdout);
    quiet(child.stderr);
    running.set(m.id, child);
    send({ id: m.id, pid: child.pid, stream: 'stdout' }, child.stdout as Socket);
    send({ id: m.id, pid: child.pid, stream: 'stderr' }, child.stderr as Socket);
    if (child.stdin) send({ id: m.id, pid: child.pid, stream: 'stdin' }, child.stdin as Socket);
    child.on('error', () => {}); // a signal to a process already gone
    child.on('exit', (code, signal) => {
      running.delete(m.id);
      send({ id: m.id, exit: { code, signal } });
    });
  });
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}

type Pending = {
  handlers: LaunchHandlers;
  pid?: number;
  /** The pipes handed over so far (destroyed if the command is then reported as not started). */
  streams: Socket[];
  /** A signal asked for before the pid was known. */
  kill?: NodeJS.Signals;
};

/** Sends a signal to a process group the server started (nothing when it has no pid yet or is already gone). */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals) {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** How the helper reports a command it could not start. */
type SpawnFailure = Extract<Reply, { error: unknown }>['error'];

/** Node's spawn error for a failure the helper reports (same message and fields). */
function spawnError(e: SpawnFailure) {
  return Object.assign(new Error(e.message), {
    code: e.code,
    errno: e.errno,
    syscall: e.syscall,
    path: e.path,
  });
}

export class Launcher {
  private helper: ChildProcess | null = null;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private idleTimer: NodeJS.Timeout | null = null;
  private crashes: number[] = [];
  private disabled = false;

  constructor(private readonly idleMs = IDLE_MS) {}

  /** Starts `command` from the helper when it is ready, else from this process (starting the helper for later). */
  launch(command: string, args: string[], opts: LaunchOptions, handlers: LaunchHandlers): Launched {
    // Node refuses arguments with NUL bytes by throwing from spawn: let it, here, as before.
    if (!this.ready || hasNul(command, args, opts)) {
      this.start();
      return direct(command, args, opts, handlers);
    }
    const id = this.nextId++;
    const entry: Pending = { handlers, streams: [] };
    this.pending.set(id, entry);
    this.busy();
    const request: LaunchRequest = { id, command, args, cwd: opts.cwd, env: opts.env, stdin: opts.stdin };
    this.helper?.send(request, (err) => {
      if (err) this.finish(id, { message: `the launcher process did not take the command: ${err.message}` });
    });
    return {
      kill: (signal) => {
        if (!this.pending.has(id)) return;
        if (entry.pid === undefined) entry.kill = signal;
        else this.helper?.send({ id, kill: signal }, () => {});
      },
    };
  }

  /** Resolves once the helper takes commands (tests; the server never waits for it). */
  async whenReady(): Promise<number> {
    this.start();
    if (!this.helper) return 0;
    if (!this.ready) {
      this.helper.ref();
      await new Promise<void>((resolve) => this.readyWaiters.push(resolve));
    }
    return this.helperPid();
  }

  /** The helper's pid while it runs. */
  helperPid(): number {
    return this.helper?.pid ?? 0;
  }

  /** Lets the helper go now if no command runs (the next command starts a new one). */
  stop() {
    if (this.helper && !this.pending.size) this.release(this.helper);
  }

  /** Disconnects an idle helper, which then exits; no command is sent to it any more. */
  private release(helper: ChildProcess) {
    if (this.helper === helper) {
      this.helper = null;
      this.ready = false;
    }
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (helper.connected) helper.disconnect();
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private start() {
    if (this.helper || this.disabled) return;
    // Compilers that keep function names (tsx, for the sources) wrap named functions in a `__name` of their module.
    const program = `const __name = (target) => target; (${launcherProgram.toString()})(require)`;
    const helper = spawn(process.execPath, ['-e', program], {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.helper = helper;
    this.ready = false;
    helper.on('message', (m: Reply, handle?: Socket) => this.reply(m, handle));
    // A helper that could not be started at all has no exit to wait for.
    helper.on('error', () => {
      if (helper.pid === undefined) this.gone(helper);
    });
    helper.on('exit', () => this.gone(helper));
    // Not waited for while it starts; its idle time counts from when it is ready.
    helper.unref();
    helper.channel?.unref();
  }

  private reply(m: Reply, handle?: Socket) {
    if ('ready' in m) {
      this.ready = true;
      for (const resolve of this.readyWaiters.splice(0)) resolve();
      return this.idle();
    }
    const entry = this.pending.get(m.id);
    if (!entry) {
      handle?.destroy();
      return;
    }
    if ('error' in m) return this.finish(m.id, m.error);
    if ('exit' in m) {
      this.pending.delete(m.id);
      entry.handlers.exited(m.exit.code, m.exit.signal);
      return this.idle();
    }
    if (!handle) return;
    if (entry.pid === undefined) {
      entry.pid = m.pid;
      entry.handlers.spawned(m.pid);
      if (entry.kill) this.helper?.send({ id: m.id, kill: entry.kill }, () => {});
    }
    entry.streams.push(handle);
    if (m.stream === 'stdin') entry.handlers.input?.(handle);
    else entry.handlers.output(m.stream, handle);
  }

  /** A command the helper could not start, or could not be asked to. */
  private finish(id: number, error: SpawnFailure) {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    for (const stream of entry.streams) stream.destroy();
    entry.handlers.failed(spawnError(error));
    this.idle();
  }

  /**
   * The helper ended: what it was watching can no longer be waited for, so each command's group is killed and the
   * command reported as killed. The next command starts a new helper, unless helpers keep ending.
   */
  private gone(helper: ChildProcess) {
    if (this.helper !== helper) return; // let go before it ended, with nothing running
    this.helper = null;
    this.ready = false;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const lost = [...this.pending];
    this.pending.clear();
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
    if (this.crashes.length >= MAX_CRASHES) this.disabled = true;
    for (const [, entry] of lost) {
      if (entry.pid === undefined) {
        entry.handlers.failed(new Error('the launcher process ended before the command started'));
        continue;
      }
      killGroup(entry.pid, 'SIGKILL');
      entry.handlers.exited(null, 'SIGKILL');
    }
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  /** While commands run the helper is waited for; once none has run for idleMs it is let go. */
  private busy() {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.helper?.ref();
    this.helper?.channel?.ref();
  }

  private idle() {
    if (this.pending.size || !this.helper) return;
    const helper = this.helper;
    helper.unref();
    helper.channel?.unref();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.helper === helper && !this.pending.size) this.release(helper);
    }, this.idleMs);
    this.idleTimer.unref();
  }
}

function hasNul(command: string, args: string[], opts: LaunchOptions) {
  const nul = (s: string) => s.includes('\0');
  return (
    nul(command) ||
    nul(opts.cwd) ||
    args.some(nul) ||
    Object.entries(opts.env).some(([k, v]) => nul(k) || nul(String(v)))
  );
}

/** The command spawned by this process itself, with the same handlers. */
function direct(command: string, args: string[], opts: LaunchOptions, handlers: LaunchHandlers): Launched {
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) child.on('error', (err) => handlers.failed(err));
  else {
    child.on('error', () => {}); // a signal to a process already gone
    handlers.spawned(pid);
    handlers.output('stdout', child.stdout as Readable);
    handlers.output('stderr', child.stderr as Readable);
    if (child.stdin) handlers.input?.(child.stdin);
    child.on('exit', (code, signal) => handlers.exited(code, signal));
  }
  return { kill: (signal) => child.kill(signal) };
}

/** The server's launcher: one helper per process. */
export const launcher = new Launcher();
