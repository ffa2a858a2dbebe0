import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  type Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
} from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { isUnder } from '../sandbox/confinement';

/** What git log -1 --format=%H%n%s prints for a repository's HEAD. */
export type HeadCommit = { hash: string; message: string };

/** Larger than any file this reads needs to be (HEAD, a ref, packed-refs, one commit object). */
const MAX_FILE = 4 * 1024 * 1024;
const MAX_COMMIT = 1024 * 1024;
const SHA1 = /^[0-9a-f]{40}$/;
const REF = /^refs\/(?:[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*\/)*[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*$/;

/** Anything this reader does not handle the way git would: the caller asks git instead. */
class Unusual extends Error {}

/**
 * The commit a local repository's HEAD names and its subject, read from git's own files by the server, so that
 * a task using a repository in place does not pay for a confined `git log` before it starts. The repository is
 * anyone's with push rights, so it is read as hostile input: every file is opened without following a symbolic
 * link and must really lie in the repository's .git folder (a link or a swapped folder pointing at the server's
 * files is refused), FIFOs and devices are refused without blocking, sizes are capped, and the commit object is
 * only believed when its content hashes to the commit id. Returns null whenever git could answer differently
 * (a linked worktree or submodule whose .git is a file, a SHA-256 repository, replace refs or grafts, a commit in
 * another encoding, an object stored as a delta or in an alternate store other than `objectsFrom`): the caller
 * then asks git, confined.
 *
 * `objectsFrom` names bare repositories whose objects the repository borrows (a clone made with --shared from the
 * server's cache of a remote): the commit is looked for there too, with the same checks inside each of them.
 */
export function readHeadCommit(repoDir: string, objectsFrom: string[] = []): HeadCommit | null {
  try {
    const gitDir = join(repoDir, '.git');
    if (!lstatSync(gitDir).isDirectory()) return null;
    const own = new RepositoryFiles(realpathSync(gitDir));
    const stores = [own];
    for (const bare of objectsFrom) {
      if (!lstatSync(bare).isDirectory()) return null;
      stores.push(new RepositoryFiles(realpathSync(bare)));
    }
    if (stores.some((files) => files.replaced())) return null;
    const hash = own.resolveHead();
    for (const files of stores) {
      const object = files.loose(hash) ?? files.packed(hash);
      if (object) return { hash, message: subjectOf(object) };
    }
    return null;
  } catch {
    // Whatever went wrong (a refusal above, a truncated object, a file gone meanwhile), git is asked.
    return null;
  }
}

/** More refs than this and the listing is left to git (a digest of them is no cheaper than its listing). */
const MAX_REFS = 20_000;

/**
 * A digest of what `git ls-remote` would list for the repository at `path` (a working copy or a bare repository
 * of this machine, named by a file:// URL): HEAD and every branch and tag, loose and packed, read from git's files
 * by the server with the checks readHeadCommit makes. The same refs give the same digest and any change of a ref
 * gives another, so the checkout can tell whether its cache must fetch without starting `ls-remote` (git and
 * upload-pack, through a shell). Null whenever git could list otherwise (a reftable repository, a .git file, a
 * link among the refs, too many of them): the checkout then asks git.
 */
export function refsDigest(path: string): string | null {
  try {
    const dotGit = join(path, '.git');
    let gitDir = path;
    try {
      const st = lstatSync(dotGit);
      if (!st.isDirectory()) return null;
      gitDir = dotGit;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    }
    if (!lstatSync(gitDir).isDirectory()) return null;
    const files = new RepositoryFiles(realpathSync(gitDir));
    return files.refsDigest();
  } catch {
    return null;
  }
}

/** The files of one .git folder, each opened by path relative to it and checked to be really inside it. */
class RepositoryFiles {
  constructor(private readonly root: string) {}

  /** Opens a regular file of the repository read-only; null when there is none. */
  private open(rel: string): number | null {
    let fd: number;
    try {
      fd = openSync(join(this.root, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      throw new Unusual(`${rel}: ${code}`);
    }
    try {
      // The folders on the way may have been links: what was opened must be in the repository all the same.
      const real = readlinkSync(`/proc/self/fd/${fd}`);
      const st = fstatSync(fd);
      if (!isUnder(real, this.root) || !st.isFile() || st.size > MAX_FILE) throw new Unusual(rel);
      return fd;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Whether git would show other commits than the objects say: grafts or replace refs (loose or packed). */
  replaced(): boolean {
    if (present(join(this.root, 'info', 'grafts'))) return true;
    try {
      if (readdirSync(join(this.root, 'refs', 'replace')).length > 0) return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return true;
    }
    return (this.read('packed-refs')?.toString('latin1') ?? '').includes(' refs/replace/');
  }

  /** A whole small file; null when there is none. */
  read(rel: string): Buffer | null {
    const fd = this.open(rel);
    if (fd === null) return null;
    try {
      return readAll(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** The commit id HEAD names, directly (detached) or through a branch, loose or packed. */
  resolveHead(): string {
    const head = this.text('HEAD');
    if (SHA1.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref || !REF.test(ref) || ref.split('/').includes('..')) throw new Unusual('HEAD');
    const loose = this.read(ref);
    if (loose !== null) {
      const hash = loose.toString('latin1').trim();
      if (!SHA1.test(hash)) throw new Unusual(ref);
      return hash;
    }
    const packedRefs = this.read('packed-refs')?.toString('latin1') ?? '';
    for (const line of packedRefs.split('\n')) {
      if (line.startsWith('#') || line.startsWith('^')) continue;
      const [hash = '', name] = line.trim().split(' ');
      if (name === ref && SHA1.test(hash)) return hash;
    }
    // A branch without commits, or a ref git resolves some other way.
    throw new Unusual(ref);
  }

  /** See refsDigest(): HEAD as written, then every branch and tag with its commit, loose ones over packed ones. */
  refsDigest(): string {
    if (present(join(this.root, 'reftable'))) throw new Unusual('reftable');
    const head = this.text('HEAD');
    const refs = new Map<string, string>();
    for (const line of (this.read('packed-refs')?.toString('latin1') ?? '').split('\n')) {
      if (!line || line.startsWith('#') || line.startsWith('^')) continue;
      const [hash = '', name = ''] = line.trim().split(' ');
      if (!SHA1.test(hash) || !REF.test(name)) throw new Unusual('packed-refs');
      if (name.startsWith('refs/heads/') || name.startsWith('refs/tags/')) refs.set(name, hash);
    }
    const walk = (rel: string) => {
      let entries: Dirent[];
      try {
        // A folder swapped for a link after it was listed is caught when its files are opened (they must lie
        // in the repository); the two the walk starts from are checked here.
        if (!lstatSync(join(this.root, rel)).isDirectory()) throw new Unusual(rel);
        entries = readdirSync(join(this.root, rel), { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw new Unusual(rel);
      }
      for (const entry of entries) {
        const name = `${rel}/${entry.name}`;
        if (entry.isDirectory()) walk(name);
        else if (entry.isFile() && REF.test(name)) {
          const hash = this.text(name);
          if (!SHA1.test(hash)) throw new Unusual(name);
          refs.set(name, hash);
        } else if (!entry.name.endsWith('.lock')) throw new Unusual(name);
        if (refs.size > MAX_REFS) throw new Unusual('too many refs');
      }
    };
    walk('refs/heads');
    walk('refs/tags');
    const listing = [
      `HEAD ${head}`,
      ...[...refs].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, h]) => `${h} ${n}`),
    ];
    return createHash('sha256').update(listing.join('\n')).digest('hex');
  }

  private text(rel: string): string {
    const content = this.read(rel);
    if (content === null) throw new Unusual(rel);
    return content.toString('latin1').trim();
  }

  /** The body of a loose commit object; null when the object is not stored loose. */
  loose(hash: string): Buffer | null {
    const compressed = this.read(`objects/${hash.slice(0, 2)}/${hash.slice(2)}`);
    if (compressed === null) return null;
    return commitBody(hash, inflateSync(compressed, { maxOutputLength: MAX_COMMIT + 64 }));
  }

  /** The body of a commit stored whole in a pack (version 2 index); null when no pack holds it. */
  packed(hash: string): Buffer | null {
    let names: string[];
    try {
      names = readdirSync(join(this.root, 'objects', 'pack'));
    } catch {
      return null;
    }
    const id = Buffer.from(hash, 'hex');
    for (const name of names.filter((n) => n.endsWith('.idx'))) {
      const offset = this.indexOffset(`objects/pack/${name}`, id);
      if (offset === null) continue;
      return this.packEntry(`objects/pack/${name.slice(0, -'.idx'.length)}.pack`, offset, hash);
    }
    return null;
  }

  /** Where a pack index says the object `id` starts in its pack, found by binary search; null when absent. */
  private indexOffset(rel: string, id: Buffer): number | null {
    const fd = this.open(rel);
    if (fd === null) return null;
    try {
      const head = readAt(fd, 0, 8 + 256 * 4);
      if (head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) throw new Unusual(rel);
      const fanout = (i: number) => (i < 0 ? 0 : head.readUInt32BE(8 + i * 4));
      const count = fanout(255);
      let lo = fanout((id[0] as number) - 1);
      let hi = fanout(id[0] as number);
      const names = 8 + 256 * 4;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const cmp = readAt(fd, names + mid * 20, 20).compare(id);
        if (cmp === 0) {
          const offsets = names + count * 24;
          const small = readAt(fd, offsets + mid * 4, 4).readUInt32BE(0);
          if (!(small & 0x80000000)) return small;
          const large = readAt(fd, offsets + count * 4 + (small & 0x7fffffff) * 8, 8).readBigUInt64BE(0);
          if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw new Unusual(rel);
          return Number(large);
        }
        if (cmp < 0) lo = mid + 1;
        else hi = mid;
      }
      return null;
    } finally {
      closeSync(fd);
    }
  }

  /** The commit at `offset` of a pack, when it is stored whole (not as a delta). */
  private packEntry(rel: string, offset: number, hash: string): Buffer {
    const fd = this.open(rel);
    if (fd === null) throw new Unusual(rel);
    try {
      const header = readAt(fd, offset, 16);
      let byte = header[0] as number;
      const type = (byte >> 4) & 7;
      let size = byte & 15;
      let shift = 4;
      let at = 1;
      while (byte & 0x80) {
        byte = header[at++] as number;
        size += (byte & 0x7f) * 2 ** shift;
        shift += 7;
        if (at >= header.length) throw new Unusual(rel);
      }
      // 1 is a whole commit; deltas (6, 7) and anything else are git's to resolve.
      if (type !== 1 || size > MAX_COMMIT) throw new Unusual(rel);
      // Deflate never grows data by more than a few bytes per 16 KiB block, plus the zlib header and trailer.
      const compressed = readAt(fd, offset + at, size + 1024, true);
      const body = inflateSync(compressed, { maxOutputLength: MAX_COMMIT });
      if (body.length !== size) throw new Unusual(rel);
      return commitBody(hash, Buffer.concat([Buffer.from(`commit ${size}\0`), body]));
    } finally {
      closeSync(fd);
    }
  }
}

const present = (path: string) => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** `len` bytes of a file from `position`; fewer only when `short` allows it (the end of the file). */
function readAt(fd: number, position: number, len: number, short = false): Buffer {
  const buf = Buffer.alloc(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, position + got);
    if (n === 0) break;
    got += n;
  }
  if (got < len && !short) throw new Unusual('short read');
  return buf.subarray(0, got);
}

function readAll(fd: number): Buffer {
  return readAt(fd, 0, fstatSync(fd).size, true);
}

/** The commit's content after its header, believed only when the whole object hashes to `hash`. */
function commitBody(hash: string, object: Buffer): Buffer {
  if (createHash('sha1').update(object).digest('hex') !== hash)
    throw new Unusual('object does not match its id');
  const nul = object.indexOf(0);
  const header = object.subarray(0, nul).toString('latin1');
  const body = object.subarray(nul + 1);
  if (header !== `commit ${body.length}`) throw new Unusual('not a commit');
  return body;
}

/**
 * git's %s: the first paragraph of the message, its lines joined by spaces. A commit that names an encoding
 * other than UTF-8 is git's to convert.
 */
function subjectOf(body: Buffer): string {
  const end = body.indexOf('\n\n');
  const headers = (end < 0 ? body : body.subarray(0, end)).toString('utf8').split('\n');
  const encoding = headers.find((line) => line.startsWith('encoding '))?.slice('encoding '.length);
  if (encoding && !/^utf-?8$/i.test(encoding.trim())) throw new Unusual('encoding');
  if (end < 0) return '';
  const lines = body
    .subarray(end + 2)
    .toString('utf8')
    .split('\n');
  let first = 0;
  while (first < lines.length && !(lines[first] as string).trim()) first++;
  const paragraph: string[] = [];
  for (let i = first; i < lines.length && (lines[i] as string).trim(); i++)
    paragraph.push((lines[i] as string).trim());
  return paragraph.join(' ');
}
