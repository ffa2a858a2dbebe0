import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import type { SandboxPath } from '../../lib/sandbox-paths';

// The bubblewrap command line of one confined command: what of the machine it sees, what is masked, the task's own
// folders on top, and how it drops capabilities or becomes the task user.

/** A user of this machine, as /etc/passwd names it. */
export type TaskUser = { name: string; uid: number; gid: number; home: string };

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
 * The system a task sees read-only. /var, /home, /root, /run, /srv, /mnt and /media are not among them: they hold
 * other programs' data (databases, users' files, sockets).
 */
export const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];

/** Secrets of the machine under the visible system: never shown to a task. */
const MACHINE_SECRETS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/ssl/private'];

/** Where a deployment keeps Signalbox's settings (deploy/signalbox.service reads its environment file there). */
export const SETTINGS_DIR = '/etc/signalbox';

export const isUnder = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

export const realOrSelf = (path: string) => {
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
 * The mounts of the system roots: each one this machine has, bound read-only, or made the same symlink (a merged
 * /usr). Read again after a few seconds, not for every command: nine `lstat`s took about 1 ms of each command's
 * start on a slow disk, and the roots change only with the system's layout.
 */
function systemRootArgs(): string[] {
  const now = Date.now();
  if (systemRoots && now - systemRoots.at < SYSTEM_ROOTS_KEPT_MS) return systemRoots.args;
  const args: string[] = [];
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
  systemRoots = { at: now, args };
  return args;
}
let systemRoots: { at: number; args: string[] } | null = null;
const SYSTEM_ROOTS_KEPT_MS = 5_000;

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
  args.push(...systemRootArgs());
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

/** How bubblewrap treats capabilities for a server of this user running tasks as `user` (see bwrapArgs). */
export const capsFor = (user: TaskUser | null) =>
  process.getuid?.() !== 0 ? 'userns' : user ? 'switch' : 'drop';
