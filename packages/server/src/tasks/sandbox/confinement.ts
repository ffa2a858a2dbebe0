import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import { userInfo } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import type { Config } from '../../config';
import type { SandboxPath } from '../../lib/sandbox-paths';
import { installRoot } from '../../paths';
import type { SandboxUnit, TaskSandbox } from './sandbox';

/**
 * What a task's processes can see (SIGNALBOX_TASK_SANDBOX), as opposed to isolation (isolation.ts: how they are
 * held together so that all of them end). `bwrap`: every command of a task runs under bubblewrap in its own
 * PID, IPC and UTS namespaces, with the system read-only and, of the server's files, only the task's own folder;
 * `off`: commands run as the server's user with everything it can read.
 */
export type SandboxSetting = 'auto' | 'bwrap' | 'off';

export type { SandboxPath };

/** What the server resolved at start from the setting and the machine. */
export type Confinement =
  | {
      mode: 'bwrap';
      /** The bubblewrap binary. */
      bwrap: string;
      /** The server's own paths (data, install, keys, configuration): hidden wherever they would show. */
      hidden: string[];
      /** Extra paths an admin lets every task see (SIGNALBOX_TASK_SANDBOX_PATHS). */
      paths: SandboxPath[];
      /** The unprivileged user tasks run as (SIGNALBOX_TASK_USER); null: the server's own user. */
      user: TaskUser | null;
      /**
       * A folder of the server's own (hidden) holding one folder per project, `project-<id>` (a demo project's
       * copy of the example repository): each project's tasks may use their own, never another project's.
       */
      projectFolders?: string;
    }
  /** `reason` says why it is off when the setting did not ask for that (auto on a machine without bwrap). */
  | { mode: 'off'; reason?: string }
  /** SIGNALBOX_TASK_SANDBOX=bwrap on a machine where bubblewrap cannot run: tasks fail with `reason`. */
  | { mode: 'refused'; reason: string };

/** A user of this machine, as /etc/passwd names it. */
export type TaskUser = { name: string; uid: number; gid: number; home: string };

/** The user `nameOrUid` names in /etc/passwd; null when there is none. */
export function findUser(nameOrUid: string): TaskUser | null {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return null;
  }
  for (const line of passwd.split('\n')) {
    const [name = '', , uid = '', gid = '', , home = '/'] = line.split(':');
    if (name === nameOrUid || uid === nameOrUid) return { name, uid: Number(uid), gid: Number(gid), home };
  }
  const uid = Number(nameOrUid);
  return /^\d+$/.test(nameOrUid) ? { name: nameOrUid, uid, gid: uid, home: '/' } : null;
}

/**
 * A command run as `user` inside the sandbox: setpriv (util-linux) takes the user's uid and gid with no other
 * groups, which leaves it no capabilities. bubblewrap itself stays root, so it can bind the task's folder whatever
 * the permissions of the folders above it.
 */
export const asUser = (user: TaskUser, command: string, args: string[]) => [
  'setpriv',
  '--reuid',
  String(user.uid),
  '--regid',
  String(user.gid),
  '--clear-groups',
  '--',
  command,
  ...args,
];

/**
 * Makes what the server made for a task (its folder, HOME, temp dir, secret files, the repository cache its git
 * fills) the task user's, when tasks run as one; `tree` also hands over what is inside (a cache made before).
 */
export function handOver(confinement: Confinement, path: string, tree = false) {
  if (confinement.mode !== 'bwrap' || !confinement.user) return;
  const { uid, gid } = confinement.user;
  const own = (p: string) => {
    const st = lstatSync(p);
    if (st.uid !== uid || st.gid !== gid) lchownSync(p, uid, gid);
    if (tree && st.isDirectory()) for (const name of readdirSync(p)) own(join(p, name));
  };
  // A tree already the user's is not walked again: each task's fetch keeps what it adds the user's.
  if (tree && lstatSync(path).uid === uid) return;
  own(path);
}

/** The mode a server or runner reports (/api/info, the Runners page). */
export type SandboxMode = 'bwrap' | 'off' | 'refused';

/**
 * The system a task sees read-only. /var, /home, /root, /run, /srv, /mnt and /media are not among them: they hold
 * other programs' data (databases, users' files, sockets).
 */
const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];

/** Secrets of the machine under the visible system: never shown to a task. */
const MACHINE_SECRETS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssl/private'];

/** Where a deployment keeps Signalbox's settings (deploy/signalbox.service reads its environment file there). */
export const SETTINGS_DIR = '/etc/signalbox';

export const isUnder = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

const realOrSelf = (path: string) => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * What under `root` its owner keeps from everyone else (a file others may not read, a folder they may not enter):
 * the machine's secrets in /etc (shadow, ssh host keys, TLS private keys, database and directory configuration).
 * A confined task running as root could read them by its uid alone, so they are hidden like the server's own.
 */
export function privateUnder(root: string, limit = 20_000): string[] {
  const out: string[] = [];
  let seen = 0;
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (++seen > limit) return;
      const path = join(dir, name);
      let st: ReturnType<typeof lstatSync>;
      try {
        st = lstatSync(path);
      } catch {
        continue;
      }
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) {
        if (st.mode & 0o001) walk(path);
        else out.push(path);
      } else if (!(st.mode & 0o004)) out.push(path);
    }
  };
  walk(root);
  return out;
}

/** A path hidden inside a visible tree: an empty read-only directory, or /dev/null for a file. */
function mask(path: string): string[] {
  let dir: boolean;
  try {
    dir = lstatSync(path).isDirectory();
  } catch {
    return [];
  }
  return dir ? ['--tmpfs', path, '--remount-ro', path] : ['--ro-bind', '/dev/null', path];
}

/**
 * The paths to mask among `secrets`: those inside what a task is shown, each once, and none inside another one
 * already masked (every mount is a few hundred microseconds of every command's start).
 */
function masksOf(secrets: string[], shown: string[]): string[] {
  const inShown = [...new Set(secrets)].filter((secret) => shown.some((root) => isUnder(secret, root)));
  return inShown.filter((secret) => !inShown.some((other) => other !== secret && isUnder(secret, other)));
}

/**
 * The bubblewrap arguments (before `--` and the command) for one command of a task. Mount order matters: the
 * system and admin paths first, then the masks over what they must not show, then the task's own paths on top.
 */
export function bwrapArgs(opts: {
  hidden: string[];
  paths: SandboxPath[];
  /**
   * The task's folder (read-write), its temp dir (also /tmp and /var/tmp) and its HOME, also mounted where the
   * user's passwd entry says home is (`userHome`: ssh and Ansible find ~ there, not in $HOME); the start-up probe
   * has none.
   */
  task: { dir: string; tmp: string; home: string; userHome: string } | null;
  /** Paths of this task or command (a repository cache, a local repository). */
  binds: SandboxPath[];
  cwd: string;
  /**
   * What bubblewrap does with capabilities: `drop` every one (root runs the command: uid 0 inside cannot remount
   * or reach past the mounts), keep only those setpriv needs to become the task user (`switch`), or run in a user
   * namespace (`userns`: an unprivileged server).
   */
  caps: 'drop' | 'switch' | 'userns';
}): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
  ];
  if (opts.caps === 'drop') args.push('--cap-drop', 'ALL');
  else if (opts.caps === 'switch')
    // Only setpriv runs with them (it enters the task's folder as root, owned by the task user, then drops them).
    args.push(
      '--cap-drop',
      'ALL',
      ...['CAP_SETUID', 'CAP_SETGID', 'CAP_DAC_OVERRIDE'].flatMap((cap) => ['--cap-add', cap]),
    );
  else args.push('--unshare-user');
  for (const root of SYSTEM_ROOTS) {
    let link: string | null = null;
    try {
      const st = lstatSync(root);
      if (st.isSymbolicLink()) link = readlinkSync(root);
    } catch {
      continue;
    }
    if (link !== null) args.push('--symlink', link, root);
    else args.push('--ro-bind', root, root);
  }
  // /etc/resolv.conf may point into /run (systemd-resolved): name resolution must keep working.
  const resolv = realOrSelf('/etc/resolv.conf');
  if (!SYSTEM_ROOTS.some((r) => isUnder(resolv, r)) && existsSync(resolv))
    args.push('--ro-bind', resolv, resolv);
  args.push('--proc', '/proc', '--dev', '/dev');
  // The task's own /tmp and HOME before the admin's paths (which may lie under /tmp) and the task's folder (which
  // may too), so that neither is hidden beneath them.
  const t = opts.task;
  if (t) {
    args.push('--bind', t.tmp, '/tmp', '--bind', t.tmp, '/var/tmp');
    const userHome = resolve(t.userHome);
    if (userHome !== '/' && !SYSTEM_ROOTS.some((r) => isUnder(r, userHome) || isUnder(userHome, r)))
      args.push('--bind', t.home, userHome);
  } else args.push('--tmpfs', '/tmp');
  for (const p of opts.paths) args.push(p.writable ? '--bind-try' : '--ro-bind-try', p.path, p.path);
  const shown = [...SYSTEM_ROOTS, ...opts.paths.map((p) => p.path)];
  for (const secret of masksOf([...MACHINE_SECRETS, SETTINGS_DIR, ...opts.hidden], shown))
    args.push(...mask(secret));
  if (t) args.push('--bind', t.dir, t.dir);
  for (const b of opts.binds) args.push(b.writable ? '--bind' : '--ro-bind', b.path, b.path);
  args.push('--remount-ro', '/', '--chdir', opts.cwd);
  return args;
}

/** Runs bubblewrap once with the arguments tasks get; null when it works, else why not. */
export function probeBwrap(
  bwrap: string,
  hidden: string[],
  paths: SandboxPath[],
  user: TaskUser | null = null,
): string | null {
  const args = bwrapArgs({ hidden, paths, task: null, binds: [], cwd: '/', caps: capsFor(user) });
  const command = user ? asUser(user, 'true', []) : ['true'];
  const res = spawnSync(bwrap, [...args, '--', ...command], { encoding: 'utf8', timeout: 10_000, env: {} });
  if (res.error) {
    const code = (res.error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${bwrap} was not found` : `${bwrap} cannot run: ${res.error.message}`;
  }
  if (res.status !== 0) {
    const what = user ? `${bwrap} as user ${user.name}` : bwrap;
    return `${what} failed: ${(res.stderr || `exit code ${res.status}`).trim()}`;
  }
  return null;
}

/** How bubblewrap treats capabilities for a server of this user running tasks as `user` (see bwrapArgs). */
const capsFor = (user: TaskUser | null) => (process.getuid?.() !== 0 ? 'userns' : user ? 'switch' : 'drop');

const resolved = new Map<string, Confinement>();

/** The server's or runner's sandbox from its settings, checked once per process on this machine. */
export function resolveConfinement(opts: {
  setting: SandboxSetting;
  bwrap: string;
  hidden: string[];
  paths: SandboxPath[];
  /** SIGNALBOX_TASK_USER, when set. */
  user?: string;
  /** See `projectFolders` of Confinement. */
  projectFolders?: string;
}): Confinement {
  const key = JSON.stringify(opts);
  let known = resolved.get(key);
  if (!known) {
    known = probeConfinement(opts);
    resolved.set(key, known);
  }
  return known;
}

function probeConfinement(opts: Parameters<typeof resolveConfinement>[0]): Confinement {
  if (opts.setting === 'off') return { mode: 'off' };
  const hidden = [
    ...new Set([
      ...opts.hidden.filter(Boolean).flatMap((p) => [resolve(p), realOrSelf(p)]),
      ...privateUnder('/etc'),
    ]),
  ];
  let user: TaskUser | null = null;
  if (opts.user !== undefined) {
    // An admin asked that tasks never run with the server's rights: without that user nothing runs.
    user = findUser(opts.user);
    if (!user)
      return { mode: 'refused', reason: `SIGNALBOX_TASK_USER names no user of this machine (${opts.user})` };
    if (process.getuid?.() !== 0)
      return { mode: 'refused', reason: 'SIGNALBOX_TASK_USER needs the server to run as root' };
  }
  const failure = probeBwrap(opts.bwrap, hidden, opts.paths, user);
  if (!failure)
    return {
      mode: 'bwrap',
      bwrap: opts.bwrap,
      hidden,
      paths: opts.paths,
      user,
      ...(opts.projectFolders ? { projectFolders: resolve(opts.projectFolders) } : {}),
    };
  return opts.setting === 'bwrap' || user
    ? { mode: 'refused', reason: `SIGNALBOX_TASK_SANDBOX is ${opts.setting}, but ${failure}` }
    : { mode: 'off', reason: failure };
}

/**
 * Whether `path` (really) lies in a hidden path of the server: such a path is never shown to a task, except inside
 * the folder of the task's own project (`projectId`; see `projectFolders`).
 */
export function hiddenFrom(confinement: Confinement, path: string, projectId?: number): string | null {
  if (confinement.mode !== 'bwrap') return null;
  const real = realOrSelf(path);
  const paths = [real, resolve(path)];
  // The project's own folder among the server's files: the hidden roots holding it do not count, those inside do.
  const own =
    projectId !== undefined && confinement.projectFolders
      ? join(confinement.projectFolders, `project-${projectId}`)
      : null;
  const mine = own !== null && paths.every((p) => isUnder(p, own) || isUnder(p, realOrSelf(own)));
  return (
    confinement.hidden.find(
      (h) =>
        isUnder(h, real) ||
        (paths.some((p) => isUnder(p, h)) && !(mine && (isUnder(own, h) || isUnder(realOrSelf(own), h)))),
    ) ?? null
  );
}

/** Whether `path` is visible to a task without a bind of its own (the system or an admin's path). */
export function visibleToTasks(confinement: Confinement, path: string): boolean {
  if (confinement.mode !== 'bwrap') return true;
  const real = realOrSelf(path);
  if (hiddenFrom(confinement, path)) return false;
  return [...SYSTEM_ROOTS, ...confinement.paths.map((p) => p.path)].some((root) => isUnder(real, root));
}

/** The PATH a confined task gets: the entries of `path` it can see, in order. */
export function visiblePath(confinement: Confinement, path: string): string {
  if (confinement.mode !== 'bwrap') return path;
  return path
    .split(':')
    .filter((dir) => isAbsolute(dir) && visibleToTasks(confinement, dir))
    .join(':');
}

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

/**
 * Puts every command the isolation sandbox starts under bubblewrap. Signals go to the process group of the
 * sandbox's init, which holds the command and every process that did not leave its group, as they went to the
 * command's own group without the sandbox; a SIGKILL also ends the init, and with it every process of the PID
 * namespace.
 */
export function confine(
  inner: TaskSandbox,
  confinement: Extract<Confinement, { mode: 'bwrap' }>,
  task: { dir: string; tmp: string; home: string; binds: () => SandboxPath[] },
): TaskSandbox {
  const caps = capsFor(confinement.user);
  const userHome = confinement.user?.home ?? userInfo().homedir;
  return {
    mode: inner.mode,
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
      const unit = inner.enter(confinement.bwrap, wrapped, opts);
      let outer: number | null = null;
      const confined: SandboxUnit = {
        command: unit.command,
        args: unit.args,
        started(pid) {
          outer = pid;
          unit.started(pid);
        },
        release: () => unit.release(),
        signal(sig) {
          if (outer === null) return;
          const init = initOf(outer);
          if (sig === 'SIGKILL') {
            signal(-outer, sig);
            if (init) signal(init, sig);
          } else signal(init ? -init : -outer, sig);
        },
      };
      return confined;
    },
    killAll: () => inner.killAll(),
  };
}

/** The sandbox of the server's own tasks: its data, install, key files and database hidden from them. */
export function serverConfinement(
  config: Pick<
    Config,
    'taskSandbox' | 'taskSandboxBwrap' | 'taskSandboxPaths' | 'taskUser' | 'dataDir' | 'dbUrl' | 'keyFilesDir'
  >,
): Confinement {
  const file = config.dbUrl.startsWith('sqlite://') ? config.dbUrl.slice('sqlite://'.length) : '';
  const database = file ? ['', '-wal', '-shm', '-journal'].map((suffix) => file + suffix) : [];
  return resolveConfinement({
    setting: config.taskSandbox,
    bwrap: config.taskSandboxBwrap,
    hidden: [config.dataDir, installRoot, config.keyFilesDir ?? '', ...database].filter((p) => isAbsolute(p)),
    paths: config.taskSandboxPaths,
    user: config.taskUser,
    projectFolders: join(resolve(config.dataDir), 'demo'),
  });
}
