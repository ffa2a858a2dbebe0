// The digest of what the web console's build is made from: its sources, its page, its build steps and the
// contracts' sources (test files left out). The build writes it to dist/.sources-digest; the bootstrap and the
// browser tests rebuild when it differs, which a comparison of modification times misses (a build of other
// sources made later, a checkout that keeps older times).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('.', import.meta.url));

/** Where the build keeps the digest of the sources it was made from. */
export const digestFile = join(web, 'dist', '.sources-digest');

function files(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') files(path, out);
    } else if (!/\.test\.[cm]?[jt]sx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/**
 * SHA-256 over the path and content of every file the build reads, in a fixed order (`webDir`: the web package, with
 * the contracts package beside it).
 */
export function webSourcesDigest(webDir = web) {
  const list = [
    ...files(join(webDir, 'src'), []),
    ...files(join(webDir, '..', 'contracts', 'src'), []),
    ...['index.html', 'vite.config.ts', 'precompress.ts', 'sources-digest.mjs', 'package.json'].map((f) =>
      join(webDir, f),
    ),
  ].sort();
  const hash = createHash('sha256');
  for (const path of list) {
    hash.update(relative(webDir, path));
    hash.update('\0');
    try {
      hash.update(readFileSync(path));
    } catch {
      hash.update('missing');
    }
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** The digest the current build was made from; '' when there is no build or it predates digests. */
export function builtDigest() {
  try {
    return readFileSync(digestFile, 'utf8').trim();
  } catch {
    return '';
  }
}

/** True when dist/ is missing or was built from other sources than the ones here now. */
export const webBuildIsStale = () => builtDigest() !== webSourcesDigest();
