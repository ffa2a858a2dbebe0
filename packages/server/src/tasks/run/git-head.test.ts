import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readHeadCommit, refsDigest } from './git-head';

const scratch = mkdtempSync(join(tmpdir(), 'signalbox-git-head-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@example.test',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@example.test',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });

let count = 0;
/** A repository on branch main with commits of the given messages (the last one is HEAD). */
function repository(...messages: string[]): string {
  const dir = join(scratch, `repo-${++count}`);
  mkdirSync(dir);
  git(dir, 'init', '-q', '-b', 'main');
  for (const [i, message] of messages.entries()) {
    writeFileSync(join(dir, 'file'), String(i));
    git(dir, 'add', 'file');
    git(dir, 'commit', '-q', '--cleanup=verbatim', '-m', message);
  }
  return dir;
}

/** What the confined `git log` the reader stands in for prints. */
function gitSays(dir: string) {
  const [hash = '', subject = ''] = git(dir, 'log', '-1', '--format=%H%n%s').split('\n');
  return { hash, message: subject.trim() };
}

describe('reading HEAD from a local repository without git', () => {
  it('reads a branch and a loose commit as git log does', () => {
    const dir = repository('first', 'Deploy the web tier');
    expect(readHeadCommit(dir)).toEqual(gitSays(dir));
    expect(readHeadCommit(dir)?.message).toBe('Deploy the web tier');
  });

  it('joins the lines of the first paragraph like %s, and leaves the body out', () => {
    const dir = repository('Fix the\nlogin   page\n\nLonger explanation\nhere');
    expect(readHeadCommit(dir)).toEqual(gitSays(dir));
    expect(readHeadCommit(dir)?.message).toBe('Fix the login   page');
  });

  it('reads packed refs and a commit stored in a pack (after git gc)', () => {
    const dir = repository('one', 'two', 'three');
    git(dir, 'gc', '-q', '--prune=now');
    expect(readdirSync(join(dir, '.git', 'objects', 'pack')).some((f) => f.endsWith('.idx'))).toBe(true);
    expect(readFileSync(join(dir, '.git', 'packed-refs'), 'utf8')).toContain('refs/heads/main');
    expect(readHeadCommit(dir)).toEqual(gitSays(dir));
  });

  it('reads a detached HEAD', () => {
    const dir = repository('one', 'two');
    git(dir, 'checkout', '-q', '--detach', 'HEAD~1');
    expect(readHeadCommit(dir)).toEqual({ ...gitSays(dir), message: 'one' });
  });

  it('leaves to git what it could read otherwise: no commits, replace refs, another encoding, a .git file', () => {
    const empty = repository();
    expect(readHeadCommit(empty)).toBeNull();

    const replaced = repository('one', 'two');
    git(replaced, 'replace', 'HEAD', 'HEAD~1');
    expect(gitSays(replaced).message).toBe('one');
    expect(readHeadCommit(replaced)).toBeNull();

    const latin = repository('one');
    git(latin, 'config', 'i18n.commitEncoding', 'ISO-8859-1');
    git(latin, 'commit', '-q', '--allow-empty', '-m', 'caf\u00e9');
    expect(readHeadCommit(latin)).toBeNull();

    const worktree = repository('one');
    const linked = join(scratch, `linked-${++count}`);
    git(worktree, 'worktree', 'add', '-q', linked);
    expect(readHeadCommit(linked)).toBeNull();
  });

  it("reads a shared clone's commit from the objects of the cache it borrows them from, loose or packed", () => {
    for (const pack of [false, true]) {
      const source = repository('one', 'Release 2.4');
      const cache = join(scratch, `cache-${++count}.git`);
      git(scratch, 'clone', '-q', '--bare', '--', source, cache);
      if (pack) git(cache, 'gc', '-q', '--prune=now');
      const clone = join(scratch, `clone-${count}`);
      git(scratch, 'clone', '-q', '--shared', '--', cache, clone);
      // The clone holds no object of its own: without the cache, git is asked.
      expect(readHeadCommit(clone)).toBeNull();
      expect(readHeadCommit(clone, [cache])).toEqual({ ...gitSays(clone), message: 'Release 2.4' });
    }
  });

  describe('a hostile repository', () => {
    /** A file outside the repository that a link in it may point at: the server's key, say. */
    const outside = join(scratch, 'server-secret');
    writeFileSync(outside, `${'a'.repeat(40)}\n`);

    it('cannot make the server read a file outside .git through a linked ref, HEAD or objects folder', () => {
      const ref = repository('one');
      unlinkSync(join(ref, '.git', 'refs', 'heads', 'main'));
      symlinkSync(outside, join(ref, '.git', 'refs', 'heads', 'main'));
      expect(readHeadCommit(ref)).toBeNull();

      const head = repository('one');
      const secretRef = join(scratch, `ref-${count}`);
      writeFileSync(secretRef, 'ref: refs/heads/main\n');
      unlinkSync(join(head, '.git', 'HEAD'));
      symlinkSync(secretRef, join(head, '.git', 'HEAD'));
      expect(readHeadCommit(head)).toBeNull();

      // The object's folder swapped for a link to a folder elsewhere holding a well-formed object.
      const objects = repository('one');
      const { hash } = gitSays(objects);
      const folder = join(objects, '.git', 'objects', hash.slice(0, 2));
      const elsewhere = join(scratch, `objects-${count}`);
      renameSync(folder, elsewhere);
      symlinkSync(elsewhere, folder);
      expect(readHeadCommit(objects)).toBeNull();

      // The same object folder swapped in the cache a clone borrows from.
      const source = repository('one');
      const cache = join(scratch, `cache-${++count}.git`);
      git(scratch, 'clone', '-q', '--bare', '--', source, cache);
      const clone = join(scratch, `clone-${count}`);
      git(scratch, 'clone', '-q', '--shared', '--', cache, clone);
      const cached = gitSays(clone).hash;
      const cacheFolder = join(cache, 'objects', cached.slice(0, 2));
      const moved = join(scratch, `objects-${count}`);
      renameSync(cacheFolder, moved);
      symlinkSync(moved, cacheFolder);
      expect(readHeadCommit(clone, [cache])).toBeNull();
    });

    it('refuses an object whose content does not hash to its id', () => {
      const dir = repository('one');
      const { hash } = gitSays(dir);
      const file = join(dir, '.git', 'objects', hash.slice(0, 2), hash.slice(2));
      const forged = Buffer.from('tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nforged subject\n');
      rmSync(file, { force: true });
      writeFileSync(file, deflateSync(Buffer.concat([Buffer.from(`commit ${forged.length}\0`), forged])));
      expect(readHeadCommit(dir)).toBeNull();
    });

    it('does not block on a FIFO where HEAD should be', () => {
      const dir = repository('one');
      unlinkSync(join(dir, '.git', 'HEAD'));
      execFileSync('mkfifo', [join(dir, '.git', 'HEAD')]);
      // A blocking open would hang this test (and the server's event loop) here.
      expect(readHeadCommit(dir)).toBeNull();
    });

    it('does not follow a HEAD naming a path outside refs/', () => {
      const dir = repository('one');
      writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/../../../server-secret\n');
      expect(readHeadCommit(dir)).toBeNull();
      writeFileSync(join(dir, '.git', 'HEAD'), 'ref: /etc/passwd\n');
      expect(readHeadCommit(dir)).toBeNull();
    });
  });
});

describe("a digest of a local repository's refs, read without git", () => {
  it('stays while the refs stay, and changes with a commit, a branch, a tag or HEAD', () => {
    const dir = repository('one');
    const first = refsDigest(dir);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(refsDigest(dir)).toBe(first);
    // Packing the refs moves them between files, not their values: no needless fetch.
    git(dir, 'pack-refs', '--all');
    expect(refsDigest(dir)).toBe(first);
    const seen = new Set([first]);
    const changed = () => {
      const digest = refsDigest(dir);
      expect(digest).not.toBeNull();
      expect(seen.has(digest as string)).toBe(false);
      seen.add(digest as string);
    };
    writeFileSync(join(dir, 'file'), 'two');
    git(dir, 'commit', '-qam', 'two');
    changed();
    git(dir, 'branch', 'feature/login');
    changed();
    git(dir, 'tag', 'v1');
    changed();
    git(dir, 'symbolic-ref', 'HEAD', 'refs/heads/feature/login');
    changed();
    git(dir, 'branch', '-D', 'main');
    changed();
    // A bare repository is read the same way.
    const bare = join(scratch, `bare-${++count}.git`);
    git(scratch, 'clone', '-q', '--bare', '--', dir, bare);
    expect(refsDigest(bare)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('leaves to git a ref that is a link, a .git file, a reftable and a missing repository', () => {
    const outside = join(scratch, 'linked-ref');
    writeFileSync(outside, `${'b'.repeat(40)}\n`);
    const linked = repository('one');
    symlinkSync(outside, join(linked, '.git', 'refs', 'heads', 'other'));
    expect(refsDigest(linked)).toBeNull();
    const headsLink = repository('one');
    const heads = join(headsLink, '.git', 'refs', 'heads');
    renameSync(heads, join(scratch, `heads-${count}`));
    symlinkSync(join(scratch, `heads-${count}`), heads);
    expect(refsDigest(headsLink)).toBeNull();
    const worktree = repository('one');
    const other = join(scratch, `worktree-${count}`);
    git(worktree, 'worktree', 'add', '-q', other);
    expect(refsDigest(other)).toBeNull();
    const table = repository('one');
    mkdirSync(join(table, '.git', 'reftable'));
    expect(refsDigest(table)).toBeNull();
    expect(refsDigest(join(scratch, 'no-such-repository'))).toBeNull();
  });
});
