import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { jobIn } from '../../../test/support/fake-job';
import { fakeProcesses } from '../../../test/support/fake-processes';
import { bareCopy } from '../../../test/support/git-servers';
import { commitFiles, gitRepo, insertRepository, insertTemplate } from '../../../test/support/task-fixtures';
import { runTask, useHarnessWithProject } from '../../../test/support/task-runs';
import { sharedTempDir } from '../../../test/support/task-shared';
import { branchHead } from '../../scheduler/git-head';
import { systemProcesses } from '../sandbox/process';
import type { RepositoryRow } from '../store';
import { checkoutRepository } from './git';
import type { JobDetails } from './job';

/**
 * Repository URLs, branches and submodule URLs stored before the validation rules (or restored from a backup)
 * must never reach git as an option, a remote helper or a path relative to the server's own directories.
 * Each payload would create a marker file if it ever ran.
 */

const scratch = mkdtempSync(join(tmpdir(), 'sb-git-transports-'));
const made: string[] = [scratch];
const workRepo = (files: Record<string, string>) => {
  const dir = gitRepo(files);
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

let markers = 0;
const newMarker = () => join(scratch, `marker-${++markers}`);

/** The real processes, each command's name recorded as it starts. */
const recordingProcesses = () => {
  const commands: string[] = [];
  const recording: typeof systemProcesses = {
    run: (spec, target) => {
      commands.push(spec.command);
      return systemProcesses.run(spec, target);
    },
    capture: (spec, input, opts) => {
      commands.push(spec.command);
      return systemProcesses.capture(spec, input, opts);
    },
  };
  return { commands, recording };
};

/** The working copies kept for repository `id` in the data dir `dir` (their `.ready` marks with that suffix). */
const keptCopies = (dir: string, id: number, suffix = '') => {
  const root = join(dir, 'repos', 'checkouts', `repo_${id}`);
  return readdirSync(root).flatMap((branch) =>
    readdirSync(join(root, branch)).filter((name) => name.endsWith('.ready') === (suffix === '.ready')),
  );
};

describe.each(testDialects())('repository URLs at run time on $name', (dialect) => {
  const p = useHarnessWithProject(dialect, { maxParallelTasks: 10 });
  // The sandbox's own checks run in it whatever mode the rest of the suite is timed in.
  const sandboxed = useHarnessWithProject(dialect, { maxParallelTasks: 10, taskSandbox: 'auto' });

  async function run(
    repositoryId: number,
    project = p.projectId,
    tpl: Record<string, unknown> = {},
    on: typeof p = p,
  ) {
    const template = await insertTemplate(on.h.deps, project, { repository_id: repositoryId, ...tpl });
    return runTask(on.h, on.owner, project, { template_id: template }, { timeoutMs: 15_000 });
  }

  it('fails a task whose stored URL is a helper or an option, before any git command', async () => {
    const payloads = [
      (m: string) => `ext::sh -c touch% ${m}`,
      (m: string) => `--upload-pack=touch ${m}`,
      (m: string) => `-oProxyCommand=touch ${m}`,
      (m: string) => `ssh://-oProxyCommand=touch%20${encodeURIComponent(m)}/app.git`,
      (m: string) => `example.test:--upload-pack=touch ${m}`,
      (m: string) => `https://example.test/app.git\n--upload-pack=touch ${m}`,
    ];
    for (const [i, payload] of payloads.entries()) {
      const marker = newMarker();
      const url = payload(marker);
      const repo = await insertRepository(p.h.deps, p.projectId, { git_url: url, name: `bad ${i}` });
      const { done, out } = await run(repo);
      expect(done.status, url).toBe('error');
      expect(out.at(-1), url).toBe(
        `Repository "bad ${i}" has an incorrect URL: correct it in the repository settings`,
      );
      expect(
        out.some((l) => l.startsWith('git ')),
        out.join('\n'),
      ).toBe(false);
      // Nothing ran: not even `git init` of the repository's cache.
      expect(existsSync(join(p.h.dataDir, 'repos', `repo_${repo}.git`))).toBe(false);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it("cannot read another project's cached repository through a relative URL", async () => {
    const secretRepo = workRepo({ 'run.sh': 'echo "private to project A"\n' });
    const a = await insertRepository(p.h.deps, p.projectId, { git_url: `file://${secretRepo}`, name: 'A' });
    const first = await run(a);
    expect(first.done.status, first.out.join('\n')).toBe('success');
    expect(existsSync(join(p.h.dataDir, 'repos', `repo_${a}.git`))).toBe(true);

    const { projectId: other } = await p.h.projectWithTeam(p.owner, 'Other');
    for (const git_url of [`../repo_${a}.git`, `repo_${a}.git`]) {
      const b = await insertRepository(p.h.deps, other, { git_url, name: 'B' });
      const { done, out } = await run(b, other);
      expect(done.status, out.join('\n')).toBe('error');
      expect(out.join('\n')).not.toContain('private to project A');
      expect(out.at(-1)).toBe('Repository "B" has an incorrect URL: correct it in the repository settings');
    }
  });

  it('fails a task whose stored branch looks like an option', async () => {
    const dir = workRepo({ 'run.sh': 'echo hi\n' });
    const marker = newMarker();
    const repo = await insertRepository(p.h.deps, p.projectId, {
      git_url: `file://${dir}`,
      git_branch: `--upload-pack=touch ${marker}`,
    });
    const viaRepo = await run(repo);
    expect(viaRepo.done.status).toBe('error');
    expect(viaRepo.out.at(-1)).toBe(`Incorrect branch name "--upload-pack=touch ${marker}"`);
    const good = await insertRepository(p.h.deps, p.projectId, { git_url: `file://${dir}` });
    const viaTemplate = await run(good, p.projectId, { git_branch: '-b' });
    expect(viaTemplate.done.status).toBe('error');
    expect(viaTemplate.out.at(-1)).toBe('Incorrect branch name "-b"');
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses a submodule URL that is a remote helper, naming the submodule', async () => {
    const marker = newMarker();
    const work = workRepo({ 'run.sh': 'echo parent\n' });
    const fake = execFileSync('git', ['-C', work, 'rev-parse', 'HEAD']).toString().trim();
    writeFileSync(
      join(work, '.gitmodules'),
      `[submodule "evil"]\n\tpath = libs/evil\n\turl = ext::sh -c touch% ${marker}\n`,
    );
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', work, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    git('update-index', '--add', '--cacheinfo', `160000,${fake},libs/evil`);
    git('add', '.gitmodules');
    git('commit', '-q', '-m', 'add a submodule');
    const repo = await insertRepository(p.h.deps, p.projectId, { git_url: `file://${work}` });
    const { done, out } = await run(repo);
    expect(done.status, out.join('\n')).toBe('error');
    expect(out.at(-1)).toBe('Submodule "evil" has an incorrect URL');
    expect(existsSync(marker)).toBe(false);
  });

  /** Top, middle and leaf repositories in `hub`, each a submodule of the one above (relative and absolute URLs). */
  function nestedRepos(hub: string, on: typeof p = p) {
    const git = (dir: string, ...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'protocol.file.allow=always', ...args], { stdio: 'pipe' });
    const leaf = workRepo({ 'leaf.txt': 'from the nested submodule\n' });
    bareCopy(leaf, join(hub, 'leaf.git'));
    const middle = workRepo({ 'middle.txt': 'from the middle submodule\n' });
    git(middle, 'submodule', 'add', '-q', `file://${join(hub, 'leaf.git')}`, 'leaf');
    commitFiles(middle, {}, 'add leaf');
    bareCopy(middle, join(hub, 'middle.git'));
    const top = workRepo({ 'run.sh': 'cat middle/middle.txt middle/leaf/leaf.txt\n' });
    git(top, 'submodule', 'add', '-q', `file://${join(hub, 'middle.git')}`, 'middle');
    git(top, 'config', '-f', '.gitmodules', 'submodule.middle.url', '../middle.git');
    commitFiles(top, {}, 'add middle');
    bareCopy(top, join(hub, 'top.git'));
    return insertRepository(on.h.deps, on.projectId, { git_url: `file://${join(hub, 'top.git')}` });
  }

  it('still checks out nested submodules level by level (relative and absolute file:// URLs)', async () => {
    // Where the repositories live is shared with tasks, as an admin shares a directory of repositories.
    const { done, out } = await run(await nestedRepos(sharedTempDir('hub-')));
    expect(done.status, out.join('\n')).toBe('success');
    expect(out).toContain('from the middle submodule');
    expect(out).toContain('from the nested submodule');
  });

  it('refuses, naming it, a file:// submodule outside what sandboxed tasks may read', async () => {
    // The repository itself is readable to its own fetch; its submodule is another repository on the machine.
    const hub = mkdtempSync(join(scratch, 'hub-'));
    const { done, out } = await run(await nestedRepos(hub, sandboxed), sandboxed.projectId, {}, sandboxed);
    expect(done.status).toBe('error');
    expect(out).toContain(
      `Submodule "middle" is at ${join(hub, 'middle.git')}, which tasks cannot read: an admin may share its directory with tasks (SIGNALBOX_TASK_SANDBOX_PATHS)`,
    );
    expect(out).not.toContain('from the middle submodule');
  });
});

/** What a checkout reads of its task: which task and project it is, and no app or variables. */
const checkoutDetails = {
  task: { id: 1 },
  project: { id: 1 },
  template: { type: '' },
  envVars: {},
  secretEnv: {},
} as unknown as JobDetails;

describe('git commands of a checkout', () => {
  function fakeJob() {
    const processes = fakeProcesses();
    const dir = mkdtempSync(join(scratch, 'job-'));
    return { job: jobIn(checkoutDetails, processes, dir).job, specs: processes.specs, dir };
  }

  it.each([
    ['https://example.test/app.git', 'https'],
    ['git@example.test:org/app.git', 'ssh'],
    ['git://example.test/app.git', 'git'],
    ['file:///srv/app.git', 'file'],
  ])(
    '%s: the fetch may use %s only, every other command file only, and URLs follow "--"',
    async (url, transport) => {
      const { job, specs, dir } = fakeJob();
      const repo = { id: 3, name: 'r', git_url: url, git_branch: 'main', ssh_key_id: null } as RepositoryRow;
      const cache = join(dir, 'repos', 'repo_3.git');
      mkdirSync(cache, { recursive: true }); // what `git init` makes (the fake runs nothing)
      await checkoutRepository(job, repo, { branch: 'main', commitHash: null, target: join(dir, 'repo') });
      // One confined script: the transport and every path and URL are its parameters, never its text. (The fake
      // runs nothing, so there is no clone for the server to read the commit from: git is asked, with the cache.)
      expect(specs.map((s) => s.command)).toEqual(['sh', 'git']);
      expect(specs[1]?.args).toEqual(['log', '-1', '--format=%H%n%s']);
      expect(specs[1]?.binds).toContainEqual({ path: cache, writable: true });
      const [script] = specs;
      expect(script?.args[1]).not.toContain(url);
      expect(script?.args.slice(2)).toEqual([
        'sh',
        cache,
        url,
        join(dir, 'repo'),
        '',
        transport,
        join(dir, 'checkout-failed'),
        // No repository at the path: the server lists nothing, the script asks ls-remote.
        '',
        '--branch=main',
        '--',
        url,
        join(dir, 'repo'),
      ]);
      // Only the listing and the fetch get the repository's transport; the script says file for the rest.
      expect(script?.args[1]).toContain('GIT_ALLOW_PROTOCOL=$remote git ls-remote -- "$url"');
      expect(script?.args[1]).toContain('GIT_ALLOW_PROTOCOL=$remote git -C "$cache" fetch');
      // The clone is made from the cache under the repository's URL (the URL reaches git's configuration through
      // the environment, never as text of it), and only with file.
      expect(script?.args[1]).toContain(
        'export GIT_ALLOW_PROTOCOL=file SIGNALBOX_CLONE_URL="$url"\ngit --config-env="url.$cache.insteadOf=SIGNALBOX_CLONE_URL" clone -q --shared --template= "$@"',
      );
      expect(script?.args[1]).not.toContain('set-url');
    },
  );

  it('reads the commit of a local repository from its files, and asks git only when they are unusual', async () => {
    const local = async (path: string) => {
      const { job, specs } = fakeJob();
      const repo = { id: 5, name: 'r', git_url: path, git_branch: '', ssh_key_id: null } as RepositoryRow;
      const co = await checkoutRepository(job, repo, { branch: '', commitHash: null, target: '' });
      return { co, commands: specs.map((s) => [s.command, ...s.args].join(' ')) };
    };
    const dir = workRepo({ 'run.sh': 'echo hi\n' });
    const plain = await local(dir);
    expect(plain.commands).toEqual([]);
    expect(plain.co.hash).toBe(execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD']).toString().trim());
    expect(plain.co.message).toBe(
      execFileSync('git', ['-C', dir, 'log', '-1', '--format=%s']).toString().trim(),
    );
    // A replace ref makes git show another commit than the files say: git is asked (the fake answers nothing).
    execFileSync('git', ['-C', dir, 'replace', '-f', 'HEAD', 'HEAD']);
    const unusual = await local(dir);
    expect(unusual.commands).toEqual(['git log -1 --format=%H%n%s']);
  });

  it("fetches only when the remote's refs differ from those of the last fetch (real git)", async () => {
    const remote = workRepo({ 'run.sh': 'echo one\n' });
    const dir = mkdtempSync(join(scratch, 'job-'));
    const { commands, recording } = recordingProcesses();
    const { job } = jobIn(checkoutDetails, recording, dir);
    const fetchHead = join(dir, 'repos', 'repo_6.git', 'FETCH_HEAD');
    let n = 0;
    const checkout = async (url: string) => {
      const repo = { id: 6, name: 'r', git_url: url, git_branch: 'main', ssh_key_id: null } as RepositoryRow;
      const target = join(dir, `repo-${++n}`);
      const co = await checkoutRepository(job, repo, { branch: 'main', commitHash: null, target });
      return { co, fetched: existsSync(fetchHead) ? statSync(fetchHead).mtimeMs : null, target };
    };
    const url = `file://${remote}`;
    const first = await checkout(url);
    expect(first.fetched).not.toBeNull();
    expect(first.co.hash).toBe(execFileSync('git', ['-C', remote, 'rev-parse', 'HEAD']).toString().trim());
    expect(execFileSync('git', ['-C', first.target, 'remote', 'get-url', 'origin']).toString().trim()).toBe(
      url,
    );
    // The checkout is one command: the server reads the commit from the clone and the cache's objects.
    expect(commands).toEqual(['sh']);
    expect(
      execFileSync('git', ['-C', first.target, 'config', '--get-all', 'remote.origin.url']).toString(),
    ).toBe(`${url}\n`);
    // A repository of this machine is listed by the server (a digest of its refs), not by ls-remote.
    const fetchedListing = () => readFileSync(join(dir, 'repos', 'repo_6.git', 'signalbox-fetched'), 'utf8');
    expect(fetchedListing()).toMatch(new RegExp(`^${url}\nrefs [0-9a-f]{64}\n$`));
    // Nothing moved: no fetch (FETCH_HEAD untouched), the same commit, and no process at all: the task gets a copy
    // of the working copy kept from the last clone, still under the repository's own URL, borrowing the cache's
    // objects.
    const second = await checkout(url);
    expect(second.fetched).toBe(first.fetched);
    expect(second.co.hash).toBe(first.co.hash);
    expect(commands).toEqual(['sh']);
    expect(execFileSync('git', ['-C', second.target, 'remote', 'get-url', 'origin']).toString().trim()).toBe(
      url,
    );
    expect(readFileSync(join(second.target, '.git', 'objects', 'info', 'alternates'), 'utf8').trim()).toBe(
      join(dir, 'repos', 'repo_6.git', 'objects'),
    );
    expect(readFileSync(join(second.target, 'run.sh'), 'utf8')).toBe(
      readFileSync(join(first.target, 'run.sh'), 'utf8'),
    );
    // The copy is a working copy git knows as clean, and the task's own: what it changes, the next task never sees.
    expect(execFileSync('git', ['-C', second.target, 'status', '--porcelain']).toString()).toBe('');
    writeFileSync(join(second.target, 'run.sh'), 'echo poisoned\n');
    writeFileSync(join(second.target, 'dropped.sh'), 'echo dropped\n');
    const again = await checkout(url);
    expect(commands).toEqual(['sh']);
    expect(readFileSync(join(again.target, 'run.sh'), 'utf8')).toBe('echo one\n');
    expect(existsSync(join(again.target, 'dropped.sh'))).toBe(false);
    // The kept copy lies beside the caches, out of every task's sight (a task is shown its cache only).
    expect(keptCopies(dir, 6)).toHaveLength(1);
    // A new commit on the branch: fetched again, once, and checked out.
    commitFiles(remote, { 'run.sh': 'echo two\n' }, 'second');
    const third = await checkout(url);
    expect(third.fetched).not.toBe(first.fetched);
    expect(third.co).toMatchObject({
      hash: execFileSync('git', ['-C', remote, 'rev-parse', 'HEAD']).toString().trim(),
      message: 'second',
    });
    expect(readFileSync(join(third.target, 'run.sh'), 'utf8')).toBe('echo two\n');
    const fourth = await checkout(url);
    expect(fourth.fetched).toBe(third.fetched);
    expect(readFileSync(join(fourth.target, 'run.sh'), 'utf8')).toBe('echo two\n');
    expect(commands).toEqual(['sh', 'sh']);
    // Only the copy of the last listing is kept.
    expect(keptCopies(dir, 6)).toHaveLength(1);
    // The same refs under another URL are another remote's: fetched.
    const fifth = await checkout(`file://${remote}/`);
    expect(fifth.fetched).not.toBe(third.fetched);
    // A new tag is a change too. A ref the server cannot read as git would (a link) leaves the listing to git.
    execFileSync('git', ['-C', remote, 'tag', 'v1']);
    const sixth = await checkout(url);
    expect(sixth.fetched).not.toBe(fifth.fetched);
    const tagFile = join(remote, '.git', 'refs', 'tags', 'v1');
    renameSync(tagFile, `${tagFile}-real`);
    symlinkSync(`${tagFile}-real`, tagFile);
    const seventh = await checkout(url);
    expect(seventh.co.hash).toBe(third.co.hash);
    expect(fetchedListing()).toContain(`${third.co.hash}\trefs/heads/main`);
  });

  it('keeps a working copy per branch: tasks of two branches take turns without a clone', async () => {
    const remote = workRepo({ 'run.sh': 'echo main\n' });
    execFileSync('git', ['-C', remote, 'checkout', '-q', '-b', 'dev']);
    commitFiles(remote, { 'run.sh': 'echo dev\n' }, 'dev work');
    execFileSync('git', ['-C', remote, 'checkout', '-q', 'main']);
    const dir = mkdtempSync(join(scratch, 'job-'));
    const { commands, recording } = recordingProcesses();
    const { job } = jobIn(checkoutDetails, recording, dir);
    const repo = { id: 11, name: 'r', git_url: `file://${remote}`, git_branch: 'main', ssh_key_id: null };
    let n = 0;
    const run = async (branch: string) => {
      const target = join(dir, `repo-${++n}`);
      await checkoutRepository(job, repo as RepositoryRow, { branch, commitHash: null, target });
      return readFileSync(join(target, 'run.sh'), 'utf8');
    };
    expect(await run('main')).toBe('echo main\n');
    expect(await run('dev')).toBe('echo dev\n');
    expect(await run('main')).toBe('echo main\n');
    expect(await run('dev')).toBe('echo dev\n');
    // The first fetched and cloned main, the second cloned dev from the cache; the next two ran nothing.
    expect(commands).toEqual(['sh', 'git']);
    expect(keptCopies(dir, 11)).toHaveLength(2);
  });

  it('copies the kept working copy as it is: links stay links, never followed, and the modes stay', async () => {
    // More entries than are copied between two turns of the event loop.
    const many = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`many/${i % 7}/file-${i}.txt`, `${i}\n`]),
    );
    const remote = workRepo({ 'run.sh': 'echo hi\n', 'docs/readme.txt': 'text\n', ...many });
    symlinkSync('/etc/hostname', join(remote, 'absolute-link'));
    symlinkSync('../run.sh', join(remote, 'docs', 'relative-link'));
    symlinkSync('/nonexistent/target', join(remote, 'dangling-link'));
    symlinkSync('docs', join(remote, 'dir-link'));
    commitFiles(remote, {}, 'links');
    const dir = mkdtempSync(join(scratch, 'job-'));
    const { job } = jobIn(checkoutDetails, systemProcesses, dir);
    const repo = { id: 9, name: 'r', git_url: `file://${remote}`, git_branch: 'main', ssh_key_id: null };
    const checkout = (target: string) =>
      checkoutRepository(job, repo as RepositoryRow, {
        branch: 'main',
        commitHash: null,
        target: join(dir, target),
      });
    await checkout('cloned');
    await checkout('copied');
    const copied = join(dir, 'copied');
    expect(readlinkSync(join(copied, 'absolute-link'))).toBe('/etc/hostname');
    expect(readlinkSync(join(copied, 'docs', 'relative-link'))).toBe('../run.sh');
    expect(readlinkSync(join(copied, 'dangling-link'))).toBe('/nonexistent/target');
    expect(readlinkSync(join(copied, 'dir-link'))).toBe('docs');
    expect(statSync(join(copied, 'run.sh')).mode & 0o777).toBe(
      statSync(join(dir, 'cloned', 'run.sh')).mode & 0o777,
    );
    expect(statSync(join(copied, 'run.sh')).mode & 0o100).toBe(0o100);
    expect(readFileSync(join(copied, 'many', '3', 'file-290.txt'), 'utf8')).toBe('290\n');
    // git sees the copy as the clone it stands for: nothing changed, nothing untracked.
    expect(execFileSync('git', ['-C', copied, 'status', '--porcelain']).toString()).toBe('');
  });

  it('keeps no working copy of a repository that moved while git fetched and cloned it', async () => {
    const remote = workRepo({ 'run.sh': 'echo one\n' });
    const dir = mkdtempSync(join(scratch, 'job-'));
    let moveDuringClone = true;
    // A push lands while the checkout script runs: the clone may hold either commit, so it is not kept.
    const pushing: typeof systemProcesses = {
      run: (spec, target) => {
        if (moveDuringClone) commitFiles(remote, { 'run.sh': 'echo two\n' }, 'pushed meanwhile');
        moveDuringClone = false;
        return systemProcesses.run(spec, target);
      },
      capture: (spec, input, opts) => systemProcesses.capture(spec, input, opts),
    };
    const { job } = jobIn(checkoutDetails, pushing, dir);
    const repo = { id: 10, name: 'r', git_url: `file://${remote}`, git_branch: 'main', ssh_key_id: null };
    await checkoutRepository(job, repo as RepositoryRow, {
      branch: 'main',
      commitHash: null,
      target: join(dir, 'a'),
    });
    expect(keptCopies(dir, 10, '.ready')).toEqual([]);
    // The next task lists the moved repository: it fetches and clones again, and that copy is kept.
    const co = await checkoutRepository(job, repo as RepositoryRow, {
      branch: 'main',
      commitHash: null,
      target: join(dir, 'b'),
    });
    expect(co.message).toBe('pushed meanwhile');
    expect(readFileSync(join(dir, 'b', 'run.sh'), 'utf8')).toBe('echo two\n');
    expect(keptCopies(dir, 10, '.ready')).toHaveLength(1);
  });

  it("ends with the failed step and git's exit code, and keeps no file of it", async () => {
    const dir = mkdtempSync(join(scratch, 'job-'));
    const { job } = jobIn(checkoutDetails, systemProcesses, dir);
    const repo = {
      id: 7,
      name: 'r',
      git_url: `file://${join(scratch, 'no-such-repo')}`,
      git_branch: 'main',
      ssh_key_id: null,
    } as RepositoryRow;
    await expect(
      checkoutRepository(job, repo, { branch: 'main', commitHash: null, target: join(dir, 'repo') }),
    ).rejects.toThrow('git ls-remote failed with exit code 128');
    const remote = workRepo({ 'run.sh': 'echo hi\n' });
    const missing = { ...repo, id: 8, git_url: `file://${remote}` } as RepositoryRow;
    await expect(
      checkoutRepository(job, missing, { branch: 'main', commitHash: 'abcdef1', target: join(dir, 'other') }),
    ).rejects.toThrow('git checkout failed with exit code 128');
    expect(existsSync(join(dir, 'checkout-failed'))).toBe(false);
  });
});

describe('new-commit checks', () => {
  it('refuse a helper or option URL and an option branch without running git', async () => {
    const dir = workRepo({ 'run.sh': 'echo hi\n' });
    const marker = newMarker();
    await expect(branchHead(`ext::sh -c touch% ${marker}`, 'main')).rejects.toThrow(
      'the repository URL is incorrect',
    );
    await expect(branchHead(`-oProxyCommand=touch ${marker}`, 'main')).rejects.toThrow(
      'the repository URL is incorrect',
    );
    await expect(branchHead(`file://${dir}`, `--upload-pack=touch ${marker}`)).rejects.toThrow(
      'the branch name is incorrect',
    );
    expect(existsSync(marker)).toBe(false);
    expect(await branchHead(`file://${dir}`, 'main')).toBe(
      execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD']).toString().trim(),
    );
  });
});
