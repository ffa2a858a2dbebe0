import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, sep } from 'node:path';
import type { SandboxPath } from '../../lib/sandbox-paths';
import { asUser, bwrapArgs, capsFor, isUnder } from './bwrap-args';
import type { Confinement } from './confinement';
import type { SandboxUnit, TaskSandbox } from './sandbox';

/**
 * A path under /tmp is mounted inside the task's own /tmp (its temp dir), where bubblewrap makes the folders
 * above it with the modes of the real ones (0700 for a data directory): the task user could not pass them. They
 * are made beforehand, passable (0755, nothing in them but the mount points).
 */
function openMountPoints(tmp: string, paths: (string | SandboxPath)[]) {
  for (const entry of paths) {
    const path = typeof entry === 'string' ? entry : entry.path;
    for (const base of ['/tmp', '/var/tmp']) {
      if (!isUnder(path, base) || path === base) continue;
      const parts = path
        .slice(base.length + 1)
        .split(sep)
        .slice(0, -1);
      let dir = tmp;
      for (const part of parts) {
        dir = join(dir, part);
        mkdirSync(dir, { recursive: true, mode: 0o755 });
        chmodSync(dir, 0o755);
      }
    }
  }
}

/** The pid of the sandbox's init (the one child of the outer bwrap process), once it exists. */
function initOf(outer: number): number | null {
  try {
    const first = readFileSync(`/proc/${outer}/task/${outer}/children`, 'latin1').trim().split(' ')[0];
    return first ? Number(first) : null;
  } catch {
    return null;
  }
}

const signal = (pid: number, sig: NodeJS.Signals) => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};

/** The server user's home as its passwd entry names it (read once: each read asks the user database). */
let serverHome: string | undefined;

/**
 * Puts every command the isolation sandbox starts under bubblewrap. Signals go to the process group of the
 * sandbox's init, which holds the command and every process that did not leave its group, as they went to the
 * command's own group without the sandbox; a SIGKILL also ends the init, and with it every process of the PID
 * namespace.
 *
 * The PID namespace holds every process of a command, whatever it does (a new session, a double fork, a cleared
 * environment): when the command ends, its init ends and the kernel ends the rest, and `--die-with-parent` ends it
 * all with the server. So `inner` (a cgroup or session tracking) is given only when the setting requires a cgroup
 * anyway: entering a new cgroup waits for an RCU grace period of the kernel (about 10 ms per command where cgroup2
 * is not mounted with `favordynmods`), and session tracking reads the process table four times a second.
 */
export function confine(
  inner: TaskSandbox | null,
  confinement: Extract<Confinement, { mode: 'bwrap' }>,
  task: { dir: string; tmp: string; home: string; binds: () => SandboxPath[] },
): TaskSandbox {
  const caps = capsFor(confinement.user);
  serverHome ??= userInfo().homedir;
  const userHome = confinement.user?.home ?? serverHome;
  /** The commands started and not yet released: a stop of the whole task kills each one's namespace. */
  const live = new Set<SandboxUnit>();
  return {
    mode: inner?.mode ?? 'namespace',
    enter(command, args, opts = {}) {
      const wrapped = [
        ...bwrapArgs({
          hidden: confinement.hidden,
          paths: confinement.paths,
          task: { ...task, userHome },
          binds: [...task.binds(), ...(opts.binds ?? [])],
          cwd: opts.cwd ?? task.dir,
          caps,
        }),
        '--',
        ...(confinement.user ? asUser(confinement.user, command, args) : [command, ...args]),
      ];
      if (confinement.user) openMountPoints(task.tmp, [task.dir, ...task.binds(), ...(opts.binds ?? [])]);
      const unit = inner?.enter(confinement.bwrap, wrapped, opts);
      let outer: number | null = null;
      let released: Promise<void> | null = null;
      const confined: SandboxUnit = {
        command: unit?.command ?? confinement.bwrap,
        args: unit?.args ?? wrapped,
        started(pid) {
          outer = pid;
          unit?.started(pid);
        },
        release: () =>
          (released ??= (async () => {
            live.delete(confined);
            await unit?.release();
          })()),
        signal(sig) {
          if (outer === null) return;
          const init = initOf(outer);
          if (sig === 'SIGKILL') {
            signal(-outer, sig);
            if (init) signal(init, sig);
          } else signal(init ? -init : -outer, sig);
        },
      };
      live.add(confined);
      return confined;
    },
    async killAll() {
      for (const unit of live) unit.signal?.('SIGKILL');
      await inner?.killAll();
    },
  };
}
