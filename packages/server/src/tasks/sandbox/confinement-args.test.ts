import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs } from './bwrap-args';

/** The destinations of the masks in bubblewrap arguments: /dev/null over a file, a read-only tmpfs over a folder. */
function masked(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--ro-bind' && args[i + 1] === '/dev/null') out.push(args[i + 2] as string);
    if (args[i] === '--tmpfs' && args[i + 2] === '--remount-ro') out.push(args[i + 1] as string);
  }
  return out;
}

describe('bubblewrap arguments', () => {
  // An admin's shared folder stands for the visible system: what is hidden inside it is masked.
  const shared = mkdtempSync(join(tmpdir(), 'signalbox-confinement-'));
  const secretDir = join(shared, 'private');
  mkdirSync(join(secretDir, 'deeper'), { recursive: true });
  writeFileSync(join(secretDir, 'deeper', 'key'), 'x');
  writeFileSync(join(shared, 'token'), 'x');
  afterAll(() => rmSync(shared, { recursive: true, force: true }));
  const args = (hidden: string[]) =>
    bwrapArgs({
      hidden,
      paths: [{ path: shared, writable: false }],
      task: null,
      binds: [],
      cwd: '/',
      caps: 'drop',
    });

  it('masks each hidden path of the visible system once, and nothing inside a folder it already masks', () => {
    const hidden = [
      secretDir,
      join(secretDir, 'deeper'),
      join(secretDir, 'deeper', 'key'),
      join(shared, 'token'),
    ];
    const masks = masked(args([...hidden, ...hidden, '/etc/shadow', '/nowhere-visible/data']));
    expect(masks.filter((m) => m.startsWith(shared)).sort()).toEqual([secretDir, join(shared, 'token')]);
    // /etc/shadow is also among the machine's secrets: one mask.
    expect(masks.filter((m) => m === '/etc/shadow')).toEqual(['/etc/shadow']);
    // A hidden path outside everything shown needs no mask: it is not mounted at all.
    expect(masks).not.toContain('/nowhere-visible/data');
  });

  it('masks a folder as an empty read-only tmpfs and a file as /dev/null', () => {
    const a = args([secretDir, join(shared, 'token')]);
    const at = (dest: string) => a.findIndex((x, i) => x === dest && i > 0);
    expect(a.slice(at(secretDir) - 1, at(secretDir) + 2)).toEqual(['--tmpfs', secretDir, '--remount-ro']);
    expect(a.slice(at(join(shared, 'token')) - 2, at(join(shared, 'token')) + 1)).toEqual([
      '--ro-bind',
      '/dev/null',
      join(shared, 'token'),
    ]);
  });
});
