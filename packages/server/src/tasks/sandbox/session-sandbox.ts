import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  emptyTracked,
  forget,
  killMembers,
  learn,
  membersOf,
  procInfo,
  readProcs,
  readTree,
  type Tracked,
} from './proc-table';
import type { SandboxUnit, TaskSandbox } from './sandbox';

/** How often running tasks' process trees are looked at. */
export const SESSION_POLL_MS = 250;
/** The record a restarted server sweeps: in the task's directory, removed with it when the task ends. */
export const SESSIONS_FILE = 'sessions.json';

type Record = { owner: string; known: [number, string][]; ids: [number, string | null][] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Kills until nothing of `tracked` is left (a process may fork while the kill goes out). */
async function killTracked(tracked: Tracked) {
  for (let round = 0; round < 50; round++) {
    const procs = readProcs();
    const members = membersOf(procs, tracked);
    learn(tracked, members, procs);
    if (killMembers(members) === 0) return;
    await sleep(10);
  }
}

/**
 * The fallback isolation: every command of the task starts in its own session (detached), and while any runs,
 * a shared poll records every descendant's pid, session and process group — so a grandchild that calls setsid
 * and clears its environment is still known by its session. The record is also written to the task's
 * directory for a restarted server. What the poll never saw (a process that escaped and whose parent exited
 * between two polls) cannot be found again.
 */
export class SessionSandbox implements TaskSandbox {
  readonly mode = 'session' as const;
  private readonly units = new Set<Tracked>();
  private lastWritten = '';

  constructor(
    private readonly owner: string,
    private readonly taskDir: string,
  ) {}

  enter(command: string, args: string[]): SandboxUnit {
    const tracked = emptyTracked();
    let released: Promise<void> | null = null;
    return {
      command,
      args,
      started: (pid) => {
        const info = procInfo(pid);
        if (!info) return;
        tracked.known.set(pid, info.start);
        // Detached: the command leads its own session and group.
        tracked.ids.set(pid, info.start);
        this.units.add(tracked);
        poller.add(this);
        this.persist();
      },
      release: () =>
        (released ??= (async () => {
          await killTracked(tracked);
          this.units.delete(tracked);
          if (!this.units.size) poller.delete(this);
          this.persist();
        })()),
    };
  }

  async killAll() {
    await Promise.all([...this.units].map((t) => killTracked(t)));
  }

  /** One poll: learns the task's new processes (reading only the trees of those it knows) and forgets gone ones. */
  observe() {
    let changed = false;
    for (const t of this.units) {
      const procs = readTree(t.known);
      const members = membersOf(procs, t);
      if (learn(t, members, procs)) changed = true;
      if (forget(t, members)) changed = true;
    }
    if (changed) this.persist();
  }

  private persist() {
    const known = new Map<number, string>();
    const ids = new Map<number, string | null>();
    for (const t of this.units) {
      for (const [k, v] of t.known) known.set(k, v);
      for (const [k, v] of t.ids) ids.set(k, v);
    }
    const record: Record = { owner: this.owner, known: [...known], ids: [...ids] };
    const text = JSON.stringify(record);
    if (text === this.lastWritten) return;
    try {
      const path = join(this.taskDir, SESSIONS_FILE);
      writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
      this.lastWritten = text;
    } catch {
      // the task's directory is gone: the task has ended
    }
  }
}

/** One timer for every running task in session mode. */
const poller = (() => {
  const sandboxes = new Set<SessionSandbox>();
  let timer: NodeJS.Timeout | null = null;
  return {
    add(s: SessionSandbox) {
      sandboxes.add(s);
      timer ??= setInterval(() => {
        for (const sandbox of sandboxes) sandbox.observe();
      }, SESSION_POLL_MS);
      timer.unref();
    },
    delete(s: SessionSandbox) {
      sandboxes.delete(s);
      if (!sandboxes.size && timer) {
        clearInterval(timer);
        timer = null;
      }
    },
  };
})();

/** The record a previous server process left in a task's directory, when it is this instance's. */
export function readSessionRecord(taskDir: string, owner: string): Tracked | null {
  try {
    const record = JSON.parse(readFileSync(join(taskDir, SESSIONS_FILE), 'utf8')) as Record;
    if (record.owner !== owner || !Array.isArray(record.known) || !Array.isArray(record.ids)) return null;
    return { known: new Map(record.known), ids: new Map(record.ids) };
  } catch {
    return null;
  }
}

/** Synchronous kill-until-gone for server start (the engine's reconcile step does not wait on promises). */
export function sweepTracked(tracked: Tracked): number {
  // A process killed in one round may not be gone (nor a zombie yet) by the next: it is signalled again but counted
  // once.
  const killed = new Set<number>();
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let round = 0; round < 50; round++) {
    const procs = readProcs();
    const members = membersOf(procs, tracked);
    learn(tracked, members, procs);
    if (killMembers(members, killed) === 0) break;
    Atomics.wait(pause, 0, 0, 10);
  }
  return killed.size;
}
