import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { startFirst, tiers } from '../test-tiers.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const skipped = new Set(['node_modules', 'dist', 'data', '.git', '.e2e-artifacts']);

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.test\.[cm]?[jt]sx?$/.test(entry.name) ? [relative(root, path)] : [];
  });
}

function tiersOf(file: string): string[] {
  return Object.entries(tiers)
    .filter(([, tier]) => {
      const path = relative(tier.root, file);
      if (path.startsWith('..')) return false;
      const excluded = 'exclude' in tier && picomatch(tier.exclude)(path);
      return picomatch(tier.include)(path) && !excluded;
    })
    .map(([name]) => name);
}

describe('test tiers', () => {
  const files = testFiles(root);

  it('finds the test files', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it('put every test file in exactly one tier', () => {
    const misplaced = files
      .map((file) => ({ file, tiers: tiersOf(file) }))
      .filter((entry) => entry.tiers.length !== 1);
    expect(misplaced).toEqual([]);
  });

  it('starts first only test files that exist', () => {
    expect(startFirst.filter((file) => !files.includes(file))).toEqual([]);
  });
});
