import { spawnSync } from 'node:child_process';
import { lchownSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../../config';
import type { SandboxPath } from '../../lib/sandbox-paths';
import { installRoot } from '../../paths';
import {
  asUser,
  bwrapArgs,
  capsFor,
  isUnder,
  privateUnder,
  realOrSelf,
  SYSTEM_ROOTS,
  type TaskUser,
} from './bwrap-args';

/**
 * What a task's processes can see (SIGNALBOX_TASK_SANDBOX), as opposed to isolation (isolation.ts: how they are
 * held together so that all of them end). `bwrap`: every command of a task runs under bubblewrap in its own
 * PID, IPC and UTS namespaces, with the system read-only and, of the server's files, only the task's own folder;
 * `off`: commands run as the server's user with everything it can read.
 */
export type SandboxSetting = 'auto' | 'bwrap' | 'off';

export { isUnder, SETTINGS_DIR, type TaskUser } from './bwrap-args';
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

/**
 * The PATH a confined task gets: the entries of `path` it can see, in order. Every command of every task asks with
 * the server's own PATH, whose entries are resolved (two `realpath`s each, about 2 ms for ten entries on a slow
 * disk): the answer is kept for a few seconds. What a task can reach is the mounts' doing, not this list's, so a
 * symlink changed meanwhile only leaves an entry out, or in, that long.
 */
export function visiblePath(confinement: Confinement, path: string): string {
  if (confinement.mode !== 'bwrap') return path;
  let kept = keptPaths.get(confinement);
  if (!kept) {
    kept = new Map();
    keptPaths.set(confinement, kept);
  }
  const now = Date.now();
  const last = kept.get(path);
  if (last && now - last.at < KEPT_PATH_MS) return last.value;
  const value = path
    .split(':')
    .filter((dir) => isAbsolute(dir) && visibleToTasks(confinement, dir))
    .join(':');
  if (kept.size >= 16) kept.clear();
  kept.set(path, { at: now, value });
  return value;
}

const KEPT_PATH_MS = 5_000;
const keptPaths = new WeakMap<Confinement, Map<string, { at: number; value: string }>>();

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
