import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  bareCopy,
  filesContaining,
  filesNamed,
  type GitHttpServer,
  generateKeyPair,
  type KeyPair,
  pushTo,
  type Sshd,
  startGitHttpServer,
  startSshd,
  watchArgv,
} from '../../../test/support/git-servers';
import {
  commitFiles,
  gitRepo,
  insertKey,
  insertRepository,
  insertTemplate,
  outputOf,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { runTask, useHarnessWithProject } from '../../../test/support/task-runs';
import { sharedTempDir } from '../../../test/support/task-shared';

/**
 * The engine's remote checkouts against real servers: git http-backend behind Basic auth, a real sshd, file://
 * submodules, and re-runs pinned to their commit. Secrets are looked for in task output, in every file the run
 * could have left, and in the argv of every process while the task runs.
 */

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const HTTP_USER = 'gituser';
const HTTP_PASSWORD = secret('http-pw');

let fixtures: string;
let http: GitHttpServer;
let sshd: Sshd;
let httpWork: string;
let httpBare: string;
let sshBare: string;
let plainKey: KeyPair;
let lockedKey: KeyPair;
const PASSPHRASE = secret('passphrase');
/** Working repositories made with gitRepo (under os.tmpdir()), removed at the end. */
const made: string[] = [];
const workRepo = (files: Record<string, string>) => {
  const dir = gitRepo(files);
  made.push(dir);
  return dir;
};

beforeAll(async () => {
  fixtures = mkdtempSync(join(tmpdir(), 'sb-git-remote-'));
  httpWork = workRepo({ 'run.sh': 'echo "hello over http"\ncat data.txt\n', 'data.txt': 'version one\n' });
  httpBare = bareCopy(httpWork, join(fixtures, 'http', 'repo.git'));
  http = await startGitHttpServer(join(fixtures, 'http'), { user: HTTP_USER, password: HTTP_PASSWORD });
  sshBare = bareCopy(workRepo({ 'run.sh': 'echo "hello over ssh"\n' }), join(fixtures, 'ssh', 'repo.git'));
  plainKey = generateKeyPair(fixtures, 'plain');
  lockedKey = generateKeyPair(fixtures, 'locked', PASSPHRASE);
  // The short sleep keeps the client's ssh process alive long enough for the argv sampler to see it.
  const slow = 'command="sleep 0.2; eval \\"$SSH_ORIGINAL_COMMAND\\""';
  sshd = await startSshd(join(fixtures, 'sshd'), [
    `${slow} ${plainKey.publicKey}`,
    `${slow} ${lockedKey.publicKey}`,
  ]);
});

afterAll(async () => {
  await http?.close();
  await sshd?.stop();
  for (const dir of [fixtures, ...made]) if (dir) rmSync(dir, { recursive: true, force: true });
});

const headOf = (dir: string) => execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD']).toString().trim();

describe.each(testDialects())('remote git checkouts on $name', (dialect) => {
  const p = useHarnessWithProject(dialect, { maxParallelTasks: 10 });

  async function run(repositoryId: number) {
    const tpl = await insertTemplate(p.h.deps, p.projectId, { repository_id: repositoryId });
    return runTask(p.h, p.owner, p.projectId, { template_id: tpl }, { timeoutMs: 15_000 });
  }

  /** A repository on the HTTP server (repo.git unless `repo.path` names another) with a login_password key. */
  async function httpRepository(password: string, repo: { name?: string; path?: string } = {}) {
    const key = await insertKey(p.h.deps, p.projectId, {
      type: 'login_password',
      secret: { login: HTTP_USER, password },
    });
    return insertRepository(p.h.deps, p.projectId, {
      git_url: `${http.base}/${repo.path ?? 'repo.git'}`,
      ssh_key_id: key,
      name: repo.name,
    });
  }

  /** Runs a task while sampling every process's argv; checks nothing the run left behind holds a secret. */
  async function runWatched(repositoryId: number, secrets: string[]) {
    const since = Date.now() - 1000;
    const argv = watchArgv();
    const result = await run(repositoryId);
    const seen = argv.stop();
    for (const line of result.out) for (const s of secrets) expect(line).not.toContain(s);
    for (const cmd of seen) for (const s of secrets) expect(cmd).not.toContain(s);
    expect(filesContaining(p.h.dataDir, secrets)).toEqual([]);
    expect(filesContaining(tmpdir(), secrets, since)).toEqual([]);
    // Nothing of the task keeps running (the per-task ssh-agent included).
    const taskDir = join(p.h.dataDir, 'tasks', String(result.done.id));
    const after = watchArgv().stop();
    expect(after.filter((cmd) => cmd.includes(taskDir))).toEqual([]);
    expect(existsSync(taskDir)).toBe(false);
    return { ...result, seen };
  }

  describe('HTTP with a login_password key', () => {
    it('clones through Basic auth, records the commit and keeps the password out of output, files and argv', async () => {
      const repo = await httpRepository(HTTP_PASSWORD, { name: 'over-http' });
      const before = http.requests.length;
      http.delayMs = 150;
      const { done, out, seen } = await runWatched(repo, [HTTP_PASSWORD]).finally(() => {
        http.delayMs = 0;
      });
      expect(done.status, out.join('\n')).toBe('success');
      expect(out).toContain('hello over http');
      expect(done.commit_hash).toBe(headOf(httpBare));
      expect(done.commit_message).toBe('initial commit');
      // git asked once anonymously, got 401, then came back with the key's login.
      const requests = http.requests.slice(before);
      expect(requests[0]).toMatchObject({ status: 401, user: null });
      expect(requests.some((r) => r.user === HTTP_USER && r.status === 200)).toBe(true);
      // The sampler did see git's HTTP transport while it waited on the server.
      expect(seen.some((cmd) => cmd.includes('remote-http') && cmd.includes(`${http.base}/repo.git`))).toBe(
        true,
      );
      // The cache keeps no credentials: not in its config, nor in any file of it.
      const cache = join(p.h.dataDir, 'repos', `repo_${repo}.git`);
      expect(readFileSync(join(cache, 'config'), 'utf8')).not.toContain(HTTP_PASSWORD);
      expect(spawnSync('grep', ['-rlF', '--', HTTP_PASSWORD, cache], { encoding: 'utf8' }).stdout).toBe('');
    });

    it('ends in error with the authentication failure for a wrong password, without prompting or hanging', async () => {
      const wrong = secret('wrong-pw');
      const repo = await httpRepository(wrong, { name: 'wrong-password' });
      const before = http.requests.length;
      const started = Date.now();
      const { done, out } = await runWatched(repo, [wrong]);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(done.status).toBe('error');
      expect(out.some((l) => l.includes(`Authentication failed for '${http.base}/repo.git/'`))).toBe(true);
      expect(out[out.length - 1]).toBe('git ls-remote failed with exit code 128');
      expect(out).not.toContain('hello over http');
      // One anonymous try and one with the key, no retry loop.
      expect(http.requests.slice(before).map((r) => r.status)).toEqual([401, 401]);
    });

    it('re-runs on the original commit after a new upstream commit', async () => {
      // Its own upstream, so other tests keep seeing version one.
      const work = workRepo({ 'run.sh': 'cat data.txt\n', 'data.txt': 'version one\n' });
      const bare = bareCopy(work, join(fixtures, 'http', `rerun-${dialect.name}.git`));
      const repo = await httpRepository(HTTP_PASSWORD, { path: `rerun-${dialect.name}.git` });
      const tpl = await insertTemplate(p.h.deps, p.projectId, { repository_id: repo });
      const first = (await p.owner.post(`/api/project/${p.projectId}/tasks`, { template_id: tpl })).json().id;
      const a = await waitForStatus(p.h.deps, first, ['success', 'error']);
      expect(a.status, (await outputOf(p.h.deps, first)).join('\n')).toBe('success');
      expect(a.commit_hash).toBe(headOf(bare));
      expect(await outputOf(p.h.deps, first)).toContain('version one');

      commitFiles(work, { 'data.txt': 'version two\n' }, 'second');
      pushTo(work, bare);
      const rerun = await p.owner.post(`/api/project/${p.projectId}/tasks/${first}/rerun`, {});
      expect(rerun.statusCode).toBe(201);
      const b = await waitForStatus(p.h.deps, rerun.json().id, ['success', 'error']);
      const outB = await outputOf(p.h.deps, b.id);
      expect(b.status, outB.join('\n')).toBe('success');
      expect(b.commit_hash).toBe(a.commit_hash);
      expect(outB).toContain('version one');
      expect(outB).not.toContain('version two');
      // A new run takes the new commit: the re-run really was pinned, not just stale.
      const fresh = (await p.owner.post(`/api/project/${p.projectId}/tasks`, { template_id: tpl })).json().id;
      const c = await waitForStatus(p.h.deps, fresh, ['success', 'error']);
      expect(c.commit_hash).toBe(headOf(bare));
      expect(c.commit_hash).not.toBe(a.commit_hash);
      expect(await outputOf(p.h.deps, fresh)).toContain('version two');
    });
  });

  describe('SSH with a key through the per-task ssh-agent', () => {
    /** A repository on the sshd with an ssh key of `privateKey` (and `passphrase` for it). */
    async function sshRepository(privateKey: string, passphrase = '') {
      const key = await insertKey(p.h.deps, p.projectId, {
        type: 'ssh',
        secret: { login: '', passphrase, private_key: privateKey },
      });
      const git_url = `ssh://${userInfo().username}@127.0.0.1:${sshd.port}${sshBare}`;
      return insertRepository(p.h.deps, p.projectId, { git_url, ssh_key_id: key });
    }

    for (const locked of [false, true]) {
      it(`clones with ${locked ? 'a passphrase-protected' : 'an unprotected'} key, keeping the key out of output, files and argv`, async () => {
        const pair = locked ? lockedKey : plainKey;
        const repo = await sshRepository(pair.privateKey, locked ? PASSPHRASE : '');
        // The key's longest base64 line stands for the key: any copy of it would contain that line.
        const body = pair.privateKey.split('\n').reduce((a, b) => (b.length > a.length ? b : a), '');
        const secrets = locked ? [body, PASSPHRASE] : [body];
        const { done, out, seen } = await runWatched(repo, secrets);
        expect(done.status, `${out.join('\n')}\n${sshd.log.slice(-20).join('\n')}`).toBe('success');
        expect(out).toContain('hello over ssh');
        expect(done.commit_hash).toBe(headOf(sshBare));
        expect(seen.some((cmd) => /^ssh .*git-upload-pack/.test(cmd) && cmd.includes(sshBare))).toBe(true);
        expect(seen.some((cmd) => cmd.startsWith('ssh-agent -D -a '))).toBe(true);
      });
    }

    it('fails fast with "Permission denied" for a key the server does not know', async () => {
      const stranger = generateKeyPair(fixtures, `stranger-${dialect.name}`);
      const repo = await sshRepository(stranger.privateKey);
      const started = Date.now();
      const { done, out } = await run(repo);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(done.status).toBe('error');
      expect(out.some((l) => l.includes('Permission denied (publickey)'))).toBe(true);
      expect(out[out.length - 1]).toBe('git ls-remote failed with exit code 128');
    });

    for (const passphrase of ['', secret('wrong-passphrase')]) {
      it(`fails fast with a clear message for ${passphrase ? 'a wrong' : 'a missing'} passphrase`, async () => {
        const repo = await sshRepository(lockedKey.privateKey, passphrase);
        const started = Date.now();
        // ssh-add used to ask again after a wrong passphrase, forever: the task never ended.
        const { done, out } = await runWatched(repo, passphrase ? [passphrase] : []);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(done.status).toBe('error');
        expect(out[out.length - 1]).toBe(
          'Cannot load key "repository repo" into ssh-agent: wrong or missing passphrase',
        );
      });
    }

    it('accepts an unknown, then a changed host key and records none (StrictHostKeyChecking=no, as the peer)', async () => {
      const repo = await sshRepository(plainKey.privateKey);
      const tpl = await insertTemplate(p.h.deps, p.projectId, {
        repository_id: repo,
        allow_parallel_tasks: 1,
      });
      const runOnce = async () => {
        const id = (await p.owner.post(`/api/project/${p.projectId}/tasks`, { template_id: tpl })).json().id;
        const done = await waitForStatus(p.h.deps, id, ['success', 'error']);
        return { done, out: await outputOf(p.h.deps, id) };
      };
      const first = await runOnce();
      expect(first.done.status, first.out.join('\n')).toBe('success');
      const oldHostKey = sshd.hostKey;
      await sshd.restartWithNewHostKey();
      expect(sshd.hostKey).not.toBe(oldHostKey);
      const second = await runOnce();
      expect(second.done.status, second.out.join('\n')).toBe('success');
      expect(second.out).toContain('hello over ssh');
      expect(second.out.join('\n')).not.toMatch(
        /REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/,
      );
      // UserKnownHostsFile=/dev/null: no known_hosts anywhere in the data dir (the tasks' HOME lives there).
      expect(filesNamed(p.h.dataDir, 'known_hosts')).toEqual([]);
    });
  });

  describe('submodules', () => {
    it('checks out file:// submodules (absolute and relative URLs) of a file:// repository', async () => {
      // Submodules on this machine are readable by a sandboxed task only where an admin shares them.
      const parentDir = sharedTempDir('parent-');
      const sub = bareCopy(
        workRepo({ 'message.txt': 'from the absolute submodule\n' }),
        join(parentDir, 'abs.git'),
      );
      const siblingWork = workRepo({ 'message.txt': 'from the relative submodule\n' });
      bareCopy(siblingWork, join(parentDir, 'sibling.git'));
      const parentWork = workRepo({ 'run.sh': 'cat libs/abs/message.txt libs/rel/message.txt\n' });
      const git = (...args: string[]) =>
        execFileSync('git', ['-C', parentWork, '-c', 'protocol.file.allow=always', ...args], {
          stdio: 'pipe',
        });
      git('submodule', 'add', '-q', `file://${sub}`, 'libs/abs');
      // Relative to the parent's own URL, as hosted projects usually write them.
      git('submodule', 'add', '-q', `file://${join(parentDir, 'sibling.git')}`, 'libs/rel');
      git('config', '-f', '.gitmodules', 'submodule.libs/rel.url', '../sibling.git');
      commitFiles(parentWork, {}, 'add submodules');
      bareCopy(parentWork, join(parentDir, 'parent.git'));
      const repo = await insertRepository(p.h.deps, p.projectId, {
        git_url: `file://${join(parentDir, 'parent.git')}`,
      });
      const { done, out } = await run(repo);
      expect(done.status, out.join('\n')).toBe('success');
      expect(out).toContain('from the absolute submodule');
      expect(out).toContain('from the relative submodule');
    });
  });
});
