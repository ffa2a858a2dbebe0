import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type GitTransport,
  isBranchName,
  isUsableRepositoryUrl,
  type RepositoryType,
  repositoryType,
  transportOf,
} from '@signalbox/contracts';
import { hiddenFrom, type SandboxPath, visibleToTasks } from '../sandbox/confinement';
import type { RepositoryRow } from '../store';
import { readHeadCommit, refsDigest } from './git-head';
import { type Job, TaskFailed } from './job';
import { type Agent, gitEnv, startSshAgent } from './keys';

export type Checkout = { dir: string; hash: string | null; message: string | null };

/** One fetch at a time per cached repository (parallel tasks share the cache, never a working copy). */
const locks = new Map<string, Promise<unknown>>();
async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = locks.get(key) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(fn);
  locks.set(key, next);
  try {
    return await next;
  } finally {
    if (locks.get(key) === next) locks.delete(key);
  }
}

/**
 * Removes a repository's cache and its kept working copies under `reposCache`, once no checkout of it is under way
 * (it waits for the cache's lock, as a checkout does).
 */
export function removeRepositoryCache(reposCache: string, id: number) {
  const cache = cacheOf(reposCache, id);
  return withLock(cache, async () => {
    await rm(keptCheckoutsOfCache(cache), { recursive: true, force: true });
    await rm(cache, { recursive: true, force: true });
  });
}

/** A repository's bare cache under `reposCache` (see checkoutRepository). */
const cacheOf = (reposCache: string, id: number) => join(reposCache, `repo_${id}.git`);

/** Nested submodules deeper than this are refused rather than followed. */
const MAX_SUBMODULE_DEPTH = 8;

type Submodule = { name: string; path: string; url: string; transport: GitTransport };

/**
 * The submodules .gitmodules declares that are really in the tree (gitlinks in the index), each with the
 * transport git will clone it through: a relative URL ("./x", "../x") inherits the parent's. A URL the
 * repository form would refuse fails the task before git sees it.
 */
async function submodulesOf(job: Job, dir: string, parent: GitTransport): Promise<Submodule[]> {
  const config = await job.capture({
    command: 'git',
    args: ['config', '-z', '-f', '.gitmodules', '--get-regexp', '^submodule\\..*\\.(url|path)$'],
    cwd: dir,
  });
  if (config.code !== 0) return [];
  const byName = new Map<string, { path?: string; url?: string }>();
  for (const entry of config.stdout.split('\0').filter(Boolean)) {
    const key = entry.slice(0, entry.indexOf('\n'));
    const value = entry.slice(entry.indexOf('\n') + 1);
    const field = key.endsWith('.url') ? 'url' : 'path';
    const name = key.slice('submodule.'.length, -(field.length + 1));
    byName.set(name, { ...byName.get(name), [field]: value });
  }
  const index = await job.capture({ command: 'git', args: ['ls-files', '-z', '--stage'], cwd: dir });
  const gitlinks = new Set(
    index.stdout
      .split('\0')
      .filter((line) => line.startsWith('160000 '))
      .map((line) => line.slice(line.indexOf('\t') + 1)),
  );
  const out: Submodule[] = [];
  for (const [name, { path, url }] of byName) {
    if (!path || url === undefined || !gitlinks.has(path)) continue;
    const relative = url.startsWith('./') || url.startsWith('../');
    const type = relative ? null : isUsableRepositoryUrl(url) ? repositoryType(url) : null;
    if (!relative && !type) throw new TaskFailed(`Submodule ${JSON.stringify(name)} has an incorrect URL`);
    out.push({ name, path, url, transport: type ? transportOf(type) : parent });
  }
  return out;
}

/**
 * `git submodule update --init` one level at a time, each allowed only the transports its own .gitmodules
 * URLs use. git >= 2.38.1 refuses the file transport for submodules by default (CVE-2022-39253: a cloned
 * repository making a submodule clone copy local files); that guards nothing here, where the repository's own
 * scripts run with the server's rights, so file is allowed exactly when .gitmodules names a file:// or
 * local-path submodule, or a relative one of a file:// parent. ext and fd are never allowed.
 */
async function updateSubmodules(
  job: Job,
  dir: string,
  parent: GitTransport,
  base: string,
  envFor: (allow: GitTransport[]) => Record<string, string>,
  depth = 0,
) {
  if (!existsSync(join(dir, '.gitmodules'))) return;
  if (depth >= MAX_SUBMODULE_DEPTH) throw new TaskFailed('Submodules are nested too deeply');
  const subs = await submodulesOf(job, dir, parent);
  if (!subs.length) return;
  if (job.confined) for (const sub of subs) assertSubmoduleVisible(job, sub, base);
  const transports = [...new Set(subs.map((s) => s.transport))];
  await job.execOk(
    {
      command: 'git',
      args: ['-C', dir, 'submodule', 'update', '--init'],
      env: envFor(transports),
    },
    'git submodule update',
  );
  for (const sub of subs) {
    const subDir = resolve(dir, sub.path);
    if (subDir.startsWith(dir + sep))
      await updateSubmodules(job, subDir, sub.transport, resolveUrl(base, sub.url), envFor, depth + 1);
  }
}

/** Refuses, before any process starts, a repository URL, branch or commit git could misread; answers the type. */
function assertUsable(repo: RepositoryRow, branch: string, commitHash: string | null): RepositoryType {
  const type = isUsableRepositoryUrl(repo.git_url) ? repositoryType(repo.git_url) : null;
  if (!type)
    throw new TaskFailed(
      `Repository ${JSON.stringify(repo.name)} has an incorrect URL: correct it in the repository settings`,
    );
  if (branch && !isBranchName(branch))
    throw new TaskFailed(`Incorrect branch name ${JSON.stringify(branch)}`);
  if (commitHash !== null && !/^[0-9a-f]{4,64}$/i.test(commitHash))
    throw new TaskFailed(`Incorrect commit hash ${JSON.stringify(commitHash)}`);
  return type;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** A submodule's URL as git resolves it: a relative one against its superproject's URL. */
function resolveUrl(base: string, url: string): string {
  if (!url.startsWith('./') && !url.startsWith('../')) return url;
  const parentPath = base.startsWith('file:') ? fileUrlPath(base) : base;
  return isAbsolute(parentPath) ? resolve(parentPath, url) : `${base.replace(/\/+$/, '')}/${url}`;
}

/**
 * A confined task clones a local (file) submodule only from where every task may read: a directory the admin
 * shared (SIGNALBOX_TASK_SANDBOX_PATHS). A repository naming another path (another project's repository, the
 * server's files) is refused by name rather than left to fail inside git.
 */
function assertSubmoduleVisible(job: Job, sub: Submodule, base: string) {
  if (sub.transport !== 'file') return;
  const url = resolveUrl(base, sub.url);
  const path = url.startsWith('file:') ? fileUrlPath(url) : url;
  if (!visibleToTasks(job.dirs.confinement, path))
    throw new TaskFailed(
      `Submodule ${JSON.stringify(sub.name)} is at ${path}, which tasks cannot read: an admin may share its directory with tasks (SIGNALBOX_TASK_SANDBOX_PATHS)`,
    );
}

/**
 * `env` with git told to trust the repositories at `paths` although another user owns them (safe.directory): a
 * file:// repository the project names, read by a task user of its own. It is global configuration (a file in the
 * task's temp dir), because git hides command-line configuration from the upload-pack it runs for a local URL.
 */
function trusting(job: Job, env: Record<string, string>, paths: string[]): Record<string, string> {
  if (!paths.length) return env;
  const lines = paths.flatMap((p) => [p, join(p, '.git')]).map((dir) => `\tdirectory = ${dir}\n`);
  return {
    ...env,
    GIT_CONFIG_GLOBAL: job.secretFile('trusted.gitconfig', `[safe]\n${lines.join('')}`, 0o644),
  };
}

/** The directory a file:// URL names. */
function fileUrlPath(url: string): string {
  try {
    return fileURLToPath(url);
  } catch {
    return url.replace(/^file:\/\/[^/]*/i, '');
  }
}

/**
 * The path and its real path, for a confined task to see: refused when either lies in the server's own files
 * (its data, install or keys), which no repository may name.
 */
function visiblePaths(job: Job, path: string): string[] {
  const hidden = hiddenFrom(job.dirs.confinement, path, job.details.project.id);
  if (hidden)
    throw new TaskFailed(
      `Repository path ${path} is inside the server's own files (${hidden}): tasks cannot use it`,
    );
  if (!job.confined) return [];
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // git says what is wrong with a path that does not exist
  }
  return [...new Set([resolve(path), real])];
}

/** The commit checked out in `dir` and its subject, by one git command; nulls when there is none. */
async function headCommit(job: Job, dir: string, env?: Record<string, string>, binds?: SandboxPath[]) {
  const head = await job.capture({
    command: 'git',
    args: ['log', '-1', '--format=%H%n%s'],
    cwd: dir,
    env,
    binds,
  });
  if (head.code !== 0) return { hash: null, message: null };
  const [hash = '', subject = ''] = head.stdout.split('\n');
  return { hash: hash.trim() || null, message: subject.trim().slice(0, 100) };
}

/**
 * Everything from the remote's listing to the task's own copy, as one confined command (each confined command costs
 * a few milliseconds of namespace and mount set-up, and a checkout used to be five of them):
 *
 * - the cache (a bare repository under <dataDir>/repos, made on first use, without git's template) keeps no
 *   remote: each fetch names the repository's URL, so a changed URL costs nothing extra;
 * - `ls-remote` lists the remote's refs (a repository of this machine is listed by the server instead, as a
 *   digest of its refs read from its files); when the listing (with the URL) is the one the last fetch saw, the
 *   cache already holds them and the fetch is skipped, else it fetches (a new commit, a moved tag, a cache made
 *   before);
 * - the cache is cloned (--shared, no template: a task's copy needs none of git's sample hooks) into the task's
 *   folder under the repository's own URL, which git is told to read from the cache (url.<cache>.insteadOf, its
 *   value from the environment): origin is the real URL as in any clone of it (scripts that look at origin see
 *   it, relative submodule URLs resolve against it) without a `remote set-url` after; the commit the task asks for
 *   is checked out; the server then reads the commit's hash and subject from the clone and the cache's objects
 *   (git when it cannot).
 *
 * When the server listed the refs itself and the cache's last fetch saw the same listing, nothing is fetched and
 * the clone is the whole checkout: git runs alone, without the script's shell.
 *
 * Only the listing and the fetch may use the repository's transport; everything else may use file only. Paths, URL
 * and commit are positional parameters, never part of the script's text. What git prints goes to the task log as
 * it comes (a long first fetch shows its progress); a failed step writes its name and git's exit code to a file, so
 * the task ends with "git ls-remote failed with exit code 128" as when each step was its own command.
 */
const FETCH_AND_CLONE = `cache=$1 url=$2 target=$3 commit=$4 remote=$5 failed=$6 listing=$7
shift 7
fail() { code=$?; printf '%s %s' "$1" "$code" > "$failed"; exit 1; }
if [ ! -e "$cache/HEAD" ]; then GIT_ALLOW_PROTOCOL=file git init -q --bare --template= -- "$cache" || fail init; fi
if [ -z "$listing" ]; then listing=$(GIT_ALLOW_PROTOCOL=$remote git ls-remote -- "$url") || fail ls-remote; fi
seen="$url
$listing
"
# The last fetch's listing, read by the shell itself (a process less than cat).
fetched=
if [ -f "$cache/signalbox-fetched" ]; then
  while IFS= read -r line || [ -n "$line" ]; do fetched="$fetched$line
"; done < "$cache/signalbox-fetched"
fi
if [ "$fetched" != "$seen" ]; then
  rm -f "$cache/signalbox-fetched"
  GIT_ALLOW_PROTOCOL=$remote git -C "$cache" fetch --prune --tags -- "$url" '+refs/heads/*:refs/heads/*' || fail fetch
  printf '%s' "$seen" > "$cache/signalbox-fetched"
fi
export GIT_ALLOW_PROTOCOL=file SIGNALBOX_CLONE_URL="$url"
git --config-env="url.$cache.insteadOf=SIGNALBOX_CLONE_URL" clone -q --shared --template= "$@" || fail clone
if [ -n "$commit" ]; then git -C "$target" checkout -q --detach "$commit" || fail checkout; fi`;

/** The listing the cache's last fetch saw, as the script wrote it (null when there is none or it is unusual). */
function lastFetched(cache: string): string | null {
  let fd: number;
  try {
    fd = openSync(
      join(cache, 'signalbox-fetched'),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > 4 * 1024 * 1024) return null;
    return readFileSync(fd, 'utf8');
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * Where the working copies kept for a cache live: beside the caches, never inside one (a task sees its cache, not
 * these); one folder per cache, and in it one per URL and branch a task asked for, holding the copy of that branch
 * at the cache's last listing, named by a digest of the listing (every ref and HEAD of the repository): a moved ref
 * names another copy.
 */
const keptCheckoutsOf = (cache: string, url: string, branch: string) =>
  join(keptCheckoutsOfCache(cache), digest(`${url}\n${branch}`));

/** The folder of every working copy kept for a cache, beside the caches. */
const keptCheckoutsOfCache = (cache: string) => join(dirname(cache), 'checkouts', basename(cache, '.git'));

/**
 * Copies a tree as it is, by the server (no process): directories, regular files with their modes, and links as
 * links (never followed, their text unchanged); nothing else is in a working copy git made. Written by hand because
 * `fs.cp` takes 20 ms for a small working copy's 26 entries where this takes 1 ms; it lets other requests in every
 * 256 entries, so a large working copy does not hold the event loop.
 */
async function copyTree(from: string, to: string) {
  mkdirSync(to);
  const pending: [string, string][] = [[from, to]];
  let copied = 0;
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [src, dst] = next;
    for (const entry of readdirSync(src, { withFileTypes: true })) {
      const source = join(src, entry.name);
      const target = join(dst, entry.name);
      if (entry.isDirectory()) {
        mkdirSync(target);
        pending.push([source, target]);
      } else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else if (entry.isFile()) copyFileSync(source, target, constants.COPYFILE_EXCL);
      if (++copied % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** The task's own copy of a kept working copy (see copyTree), the task user's when tasks run as one. */
async function copyCheckout(job: Job, from: string, to: string) {
  try {
    await copyTree(from, to);
  } catch (err) {
    throw new TaskFailed(`Copying the repository's working copy failed: ${(err as Error).message}`);
  }
  job.handOver(to, true);
}

/** What a checkout from the cache needs: the cache, the repository's URL and transport, and where the copy goes. */
type CloneOptions = {
  cache: string;
  url: string;
  target: string;
  branch: string;
  commitHash: string | null;
  transport: GitTransport;
  env: Record<string, string>;
  binds: SandboxPath[];
};

async function fetchAndClone(job: Job, o: CloneOptions) {
  // A repository of this machine (file://) is listed by the server from its files when it can (a digest of its
  // refs): the script then starts no `ls-remote`.
  const source = o.transport === 'file' ? fileUrlPath(o.url) : null;
  const listed = source ? refsDigest(source) : null;
  const listing = listed ? `refs ${listed}` : '';
  const unchanged =
    listing !== '' &&
    !o.commitHash &&
    existsSync(join(o.cache, 'HEAD')) &&
    lastFetched(o.cache) === `${o.url}\n${listing}\n`;
  // A commit asked for, or a repository the server cannot list: cloned for the task alone.
  if (listing === '' || o.commitHash) {
    await cloneInto(job, o, o.target, listing, unchanged);
    return readCommit(job, o);
  }
  // A branch's head of a listed repository: its working copy is kept, and the next task at the same listing gets a
  // copy of it without starting git at all.
  const kept = keptCheckoutsOf(o.cache, o.url, o.branch);
  const name = digest(listing);
  const copy = join(kept, name);
  const ready = join(kept, `${name}.ready`);
  if (unchanged && existsSync(ready)) {
    await copyCheckout(job, copy, o.target);
    return readCommit(job, o);
  }
  // This branch's copies of other listings are out of date: only this one is kept.
  rmSync(kept, { recursive: true, force: true });
  mkdirSync(kept, { recursive: true });
  job.handOver(kept);
  await cloneInto(
    job,
    { ...o, binds: [...o.binds, { path: kept, writable: true }] },
    copy,
    listing,
    unchanged,
  );
  // Kept only when the repository did not move while git fetched and cloned (the copy is then of this listing).
  if (source && refsDigest(source) === listed) writeFileSync(ready, '');
  await copyCheckout(job, copy, o.target);
  return readCommit(job, o);
}

/** The commit checked out in the task's clone, read while the cache is locked (no fetch moves its objects). */
async function readCommit(
  job: Job,
  o: { cache: string; target: string; env: Record<string, string>; binds: SandboxPath[] },
) {
  const head = readHeadCommit(o.target, [o.cache]);
  return head
    ? { hash: head.hash, message: head.message.slice(0, 100) }
    : headCommit(job, o.target, o.env, o.binds);
}

/** Fetches into the cache when its last listing differs (unless `unchanged`), then clones it into `target`. */
async function cloneInto(job: Job, o: CloneOptions, target: string, listing: string, unchanged: boolean) {
  const checkout = o.commitHash ? ['--no-checkout'] : o.branch ? [`--branch=${o.branch}`] : [];
  const failedStep = join(job.dirs.task, 'checkout-failed');
  const cloneArgs = [...checkout, '--', o.url, target];
  const run = unchanged
    ? await job.exec({
        command: 'git',
        args: [
          `--config-env=url.${o.cache}.insteadOf=SIGNALBOX_CLONE_URL`,
          'clone',
          '-q',
          '--shared',
          '--template=',
          ...cloneArgs,
        ],
        cwd: job.dirs.task,
        env: { ...o.env, GIT_ALLOW_PROTOCOL: 'file', SIGNALBOX_CLONE_URL: o.url },
        binds: o.binds,
      })
    : await job.exec({
        command: 'sh',
        args: [
          '-c',
          FETCH_AND_CLONE,
          'sh',
          o.cache,
          o.url,
          target,
          o.commitHash ?? '',
          o.transport,
          failedStep,
          listing,
          ...cloneArgs,
        ],
        cwd: job.dirs.task,
        env: o.env,
        binds: o.binds,
      });
  const failed = readText(failedStep);
  rmSync(failedStep, { force: true });
  if (run.code !== 0) {
    const step = unchanged ? ['', 'clone', String(run.code)] : failed ? /^(.+) (\d+)$/.exec(failed) : null;
    throw new TaskFailed(
      step
        ? `git ${step[1]} failed with exit code ${step[2]}`
        : `Checking out the repository failed with ${run.signal ? `signal ${run.signal}` : `exit code ${run.code}`}`,
    );
  }
}

/**
 * Brings a repository to the commit the task needs: local paths are used in place; anything else is fetched
 * into a bare cache under <dataDir>/repos/ and then cloned (--shared, cheap) into the task's own directory, so
 * parallel runs of one template never share a working copy. Credentials reach git through an ssh-agent or the
 * askpass helper, never through the URL. Every git command may use only the transport it needs (the
 * repository's own for the fetch, file for the clone from the cache), and URLs and paths follow "--".
 */
export async function checkoutRepository(
  job: Job,
  repo: RepositoryRow,
  opts: { branch: string; commitHash: string | null; target: string },
): Promise<Checkout> {
  const type = assertUsable(repo, opts.branch, opts.commitHash);
  if (type === 'local') {
    if (!existsSync(repo.git_url)) throw new TaskFailed(`Repository path ${repo.git_url} does not exist`);
    // Used in place, so a confined task works in it (and may write there, as without the sandbox) — never in
    // the server's own files.
    for (const path of visiblePaths(job, repo.git_url)) job.share(path, true);
    job.log(`Using local repository ${repo.git_url}`);
    // Read from git's files by the server when they are plain (no confined git to start); git otherwise.
    const head = readHeadCommit(repo.git_url);
    const commit = head
      ? { hash: head.hash, message: head.message.slice(0, 100) }
      : await headCommit(job, repo.git_url);
    return { dir: repo.git_url, ...commit };
  }

  const key = repo.ssh_key_id ? await job.loadKey(repo.ssh_key_id) : null;
  let agent: Agent | null = null;
  try {
    if (key?.type === 'ssh') agent = await startSshAgent(job, key, `repository ${repo.name}`);
    const envFor = (allow: GitTransport[]) =>
      gitEnv(job, agent, key?.type === 'login_password' ? key : null, allow);
    const transport = transportOf(type);
    // A confined task sees its own repository's cache only: writable for the commands that fill it, read-only
    // for the rest of the task (its clone borrows the cache's objects), and a file:// source read-only.
    const source: SandboxPath[] =
      type === 'file'
        ? visiblePaths(job, fileUrlPath(repo.git_url)).map((path) => ({ path, writable: false }))
        : [];
    const remoteEnv = trusting(job, envFor([transport]), job.confined ? source.map((s) => s.path) : []);
    const cache = cacheOf(job.dirs.reposCache, repo.id);
    const commit = await withLock(cache, async () => {
      // The cache's folder exists before git runs: a confined git sees it only as a bind of an existing path.
      mkdirSync(cache, { recursive: true });
      job.handOver(cache, true);
      job.log(`Updating repository ${repo.name}`);
      if (opts.commitHash) job.log(`Checking out commit ${opts.commitHash}`);
      return fetchAndClone(job, {
        cache,
        url: repo.git_url,
        target: opts.target,
        branch: opts.branch,
        commitHash: opts.commitHash,
        transport,
        env: remoteEnv,
        binds: [...source, { path: cache, writable: true }],
      });
    });
    // The rest of the task sees the cache read-only (its clone borrows the cache's objects).
    job.share(cache);
    await updateSubmodules(job, opts.target, transport, repo.git_url, envFor);
    return { dir: opts.target, ...commit };
  } finally {
    agent?.stop();
  }
}
