import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { IsolationMode, IsolationSetting, SandboxUnit, TaskSandbox } from './sandbox';
import { SessionSandbox } from './session-sandbox';

/** Thrown when SIGNALBOX_TASK_ISOLATION=cgroup and no usable cgroup v2 hierarchy exists. */
export class IsolationUnavailable extends Error {}

const unescapeMount = (text: string) =>
  text.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(Number.parseInt(o, 8)));

/**
 * The directory of this server's own cgroup in the cgroup v2 hierarchy (from /proc/self/mountinfo and
 * /proc/self/cgroup, so hybrid layouts and containers work), when it can hold child cgroups the server may
 * move processes into and kill with cgroup.kill; else the reason it cannot.
 */
export function ownCgroup(): { dir: string } | { reason: string } {
  let mountinfo: string;
  let cgroup: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    cgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return { reason: 'no /proc' };
  }
  const own = /^0::(.*)$/m.exec(cgroup)?.[1];
  if (own === undefined) return { reason: 'the server is in no cgroup v2' };
  for (const line of mountinfo.split('\n')) {
    const [left = '', right] = line.split(' - ');
    if (!right?.startsWith('cgroup2 ')) continue;
    const [, , , root, mount] = left.split(' ').map(unescapeMount);
    if (root === undefined || mount === undefined) continue;
    if (root !== '/' && own !== root && !own.startsWith(`${root}/`)) continue;
    const dir = join(mount, root === '/' ? own : own.slice(root.length));
    try {
      accessSync(join(dir, 'cgroup.procs'), constants.W_OK);
      accessSync(dir, constants.W_OK);
    } catch {
      return { reason: `${dir} is not writable` };
    }
    return { dir };
  }
  return { reason: 'no cgroup v2 hierarchy is mounted' };
}

let probed: { dir: string } | { reason: string } | null = null;
/** ownCgroup(), checked once per process by creating a child and finding cgroup.kill in it (kernel 5.14+). */
function usableCgroup(): { dir: string } | { reason: string } {
  if (probed) return probed;
  const own = ownCgroup();
  if (!('dir' in own)) {
    probed = own;
    return probed;
  }
  const probe = join(own.dir, `signalbox-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    const ok = existsSync(join(probe, 'cgroup.kill'));
    probed = ok ? own : { reason: 'cgroup.kill is not available (kernel older than 5.14)' };
  } catch (err) {
    probed = { reason: `cannot create a cgroup in ${own.dir}: ${(err as Error).message}` };
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // never created
    }
  }
  return probed;
}

const instanceDir = (root: string, owner: string) => join(root, `signalbox-${owner}`);

/** Enters the cgroup given as $1, then execs the rest: the command and its arguments are never shell text. */
const ENTER = 'echo 0 > "$1/cgroup.procs" && shift && exec "$@"';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const populated = (dir: string) => {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
};
const kill = (dir: string) => {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // already removed
  }
};
/**
 * Waits (up to 5 s) until a killed cgroup holds no process. The command's exit is awaited on this, so the first
 * looks come soon after one another: a sandboxed command's PID namespace is usually gone within a millisecond or
 * two of its outer process, and a fixed 10 ms pause would add 10 ms to every confined command.
 */
async function emptied(dir: string) {
  const deadline = Date.now() + 5000;
  for (let pause = 1; populated(dir) && Date.now() < deadline; pause = Math.min(pause * 2, 20))
    await sleep(pause);
}
/** Removes a cgroup and any child cgroups (a cgroup directory holds no files that need deleting). */
const removeDir = (dir: string): boolean => {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) removeDir(join(dir, e.name));
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
};
/** Removes a directory only when it is empty: another task's cgroup being set up stays. */
const removeEmpty = (dir: string) => {
  try {
    rmdirSync(dir);
  } catch {
    // in use
  }
};
/** How many processes a cgroup and its children hold. */
const processCount = (dir: string): number => {
  try {
    let n = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).length;
    for (const e of readdirSync(dir, { withFileTypes: true }))
      if (e.isDirectory()) n += processCount(join(dir, e.name));
    return n;
  } catch {
    return 0;
  }
};

/** A task's cgroup; one child cgroup per command, so each command's leftovers die when it exits. */
class CgroupSandbox implements TaskSandbox {
  readonly mode = 'cgroup' as const;
  private next = 0;
  private live = 0;

  constructor(
    private readonly instance: string,
    private readonly dir: string,
  ) {}

  enter(command: string, args: string[]): SandboxUnit {
    const unit = join(this.dir, `cmd-${++this.next}`);
    mkdirSync(unit, { recursive: true });
    this.live += 1;
    let released: Promise<void> | null = null;
    return {
      command: '/bin/sh',
      args: ['-c', ENTER, 'sh', unit, command, ...args],
      started() {},
      release: () =>
        (released ??= (async () => {
          kill(unit);
          await emptied(unit);
          removeDir(unit);
          this.live -= 1;
          // The task's and the instance's directories go when nothing is left in them.
          if (this.live === 0 && removeDir(this.dir)) removeEmpty(this.instance);
        })()),
    };
  }

  async killAll() {
    kill(this.dir);
  }
}

/** The mode tasks get under a setting, and why it is not cgroup when it is not (logged at start). */
export function isolationMode(setting: IsolationSetting): { mode: IsolationMode; reason?: string } {
  if (setting === 'session') return { mode: 'session', reason: 'SIGNALBOX_TASK_ISOLATION is session' };
  const cg = usableCgroup();
  return 'dir' in cg ? { mode: 'cgroup' } : { mode: 'session', reason: cg.reason };
}

/** The sandbox for a task's processes under the given setting. */
export function openTaskSandbox(opts: {
  owner: string;
  taskId: number;
  taskDir: string;
  setting: IsolationSetting;
}): TaskSandbox {
  if (opts.setting !== 'session') {
    const cg = usableCgroup();
    if ('dir' in cg) {
      const instance = instanceDir(cg.dir, opts.owner);
      return new CgroupSandbox(instance, join(instance, `task-${opts.taskId}`));
    }
    if (opts.setting === 'cgroup')
      throw new IsolationUnavailable(`SIGNALBOX_TASK_ISOLATION is cgroup, but ${cg.reason}`);
  }
  return new SessionSandbox(opts.owner, opts.taskDir);
}

/**
 * Server start: kills what is left in this instance's cgroups of the given tasks and removes them. Returns how
 * many processes were in them.
 */
export function sweepTaskCgroups(owner: string, taskIds: Set<number> | 'all'): number {
  const own = ownCgroup();
  if (!('dir' in own)) return 0;
  const instance = instanceDir(own.dir, owner);
  if (!existsSync(instance)) return 0;
  let count = 0;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const names =
    taskIds === 'all'
      ? readdirSync(instance).filter((name) => /^task-\d+$/.test(name))
      : [...taskIds].map((id) => `task-${id}`);
  for (const name of names) {
    const dir = join(instance, name);
    if (!existsSync(dir)) continue;
    count += processCount(dir);
    kill(dir);
    for (let i = 0; i < 500 && populated(dir); i++) Atomics.wait(pause, 0, 0, 10);
    removeDir(dir);
  }
  removeEmpty(instance);
  return count;
}
