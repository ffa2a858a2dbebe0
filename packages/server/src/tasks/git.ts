import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Job, TaskFailed } from './job';
import { type Agent, gitEnv, startSshAgent } from './keys';
import type { RepositoryRow } from './store';

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

export const isLocalPath = (url: string) => url.startsWith('/');

/** The URLs .gitmodules names (relative ones as written). */
async function submoduleUrls(job: Job, dir: string): Promise<string[]> {
  const res = await job.capture({
    command: 'git',
    args: ['config', '-z', '-f', '.gitmodules', '--get-regexp', '^submodule\\..*\\.url$'],
    cwd: dir,
  });
  if (res.code !== 0) return [];
  return res.stdout
    .split('\0')
    .filter(Boolean)
    .map((entry) => entry.slice(entry.indexOf('\n') + 1));
}

/** Whether git clones a submodule URL through the file transport (relative URLs inherit the parent's). */
function usesFileTransport(url: string, parentUrl: string): boolean {
  if (url.startsWith('./') || url.startsWith('../')) return usesFileTransport(parentUrl, '');
  return url.startsWith('file://') || isLocalPath(url);
}

/**
 * Brings a repository to the commit the task needs: local paths are used in place; anything else is fetched
 * into a bare cache under <dataDir>/repos/ and then cloned (--shared, cheap) into the task's own directory, so
 * parallel runs of one template never share a working copy. Credentials reach git through an ssh-agent or the
 * askpass helper, never through the URL.
 */
export async function checkoutRepository(
  job: Job,
  repo: RepositoryRow,
  opts: { branch: string; commitHash: string | null; target: string },
): Promise<Checkout> {
  if (isLocalPath(repo.git_url)) {
    if (!existsSync(repo.git_url)) throw new TaskFailed(`Repository path ${repo.git_url} does not exist`);
    job.log(`Using local repository ${repo.git_url}`);
    const head = await job.capture({ command: 'git', args: ['rev-parse', 'HEAD'], cwd: repo.git_url });
    if (head.code !== 0) return { dir: repo.git_url, hash: null, message: null };
    const msg = await job.capture({ command: 'git', args: ['log', '-1', '--format=%s'], cwd: repo.git_url });
    return { dir: repo.git_url, hash: head.stdout.trim(), message: msg.stdout.trim().slice(0, 100) };
  }

  const key = repo.ssh_key_id ? await job.loadKey(repo.ssh_key_id) : null;
  let agent: Agent | null = null;
  try {
    if (key?.type === 'ssh') agent = await startSshAgent(job, key, `repository ${repo.name}`);
    const env = gitEnv(job, agent, key?.type === 'login_password' ? key : null);
    const cache = join(job.dirs.reposCache, `repo_${repo.id}.git`);
    await withLock(cache, async () => {
      mkdirSync(job.dirs.reposCache, { recursive: true });
      if (!existsSync(join(cache, 'HEAD'))) {
        await job.execOk({ command: 'git', args: ['init', '-q', '--bare', cache], env }, 'git init');
        await job.execOk(
          { command: 'git', args: ['-C', cache, 'remote', 'add', 'origin', repo.git_url], env },
          'git remote add',
        );
      } else {
        await job.execOk(
          { command: 'git', args: ['-C', cache, 'remote', 'set-url', 'origin', repo.git_url], env },
          'git remote set-url',
        );
      }
      job.log(`Updating repository ${repo.name}`);
      await job.execOk(
        {
          command: 'git',
          args: ['-C', cache, 'fetch', '--prune', '--tags', 'origin', '+refs/heads/*:refs/heads/*'],
          env,
        },
        'git fetch',
      );
    });

    const args = opts.commitHash
      ? ['clone', '-q', '--shared', '--no-checkout', cache, opts.target]
      : ['clone', '-q', '--shared', ...(opts.branch ? ['--branch', opts.branch] : []), cache, opts.target];
    await job.execOk({ command: 'git', args, cwd: job.dirs.task, env }, 'git clone');
    if (opts.commitHash) {
      job.log(`Checking out commit ${opts.commitHash}`);
      await job.execOk(
        { command: 'git', args: ['-C', opts.target, 'checkout', '-q', '--detach', opts.commitHash], env },
        'git checkout',
      );
    }
    // The clone came from the cache; its origin is the repository's own URL, as in any clone of it (scripts
    // that look at origin see the real one, and relative submodule URLs like "../lib.git" resolve against it).
    await job.execOk(
      { command: 'git', args: ['-C', opts.target, 'remote', 'set-url', 'origin', repo.git_url], env },
      'git remote set-url',
    );
    if (existsSync(join(opts.target, '.gitmodules'))) {
      const allowFile = (await submoduleUrls(job, opts.target)).some((url) =>
        usesFileTransport(url, repo.git_url),
      );
      await job.execOk(
        {
          command: 'git',
          args: [
            // git >= 2.38.1 refuses the file transport for submodules (protocol.file.allow=user, CVE-2022-39253:
            // a cloned repository making a submodule clone copy local files). That guards nothing here, where the
            // repository's own scripts run with the server's rights, so it is lifted, but only when .gitmodules
            // names a file:// or local-path submodule (or a relative one of a file:// repository).
            ...(allowFile ? ['-c', 'protocol.file.allow=always'] : []),
            '-C',
            opts.target,
            'submodule',
            'update',
            '--init',
            '--recursive',
          ],
          env,
        },
        'git submodule update',
      );
    }
    const head = await job.capture({ command: 'git', args: ['rev-parse', 'HEAD'], cwd: opts.target, env });
    const msg = await job.capture({
      command: 'git',
      args: ['log', '-1', '--format=%s'],
      cwd: opts.target,
      env,
    });
    return {
      dir: opts.target,
      hash: head.code === 0 ? head.stdout.trim() : null,
      message: msg.code === 0 ? msg.stdout.trim().slice(0, 100) : null,
    };
  } finally {
    agent?.stop();
  }
}
