// Whether the server's build (dist/) is missing or older than what it is built from: the server's sources, the
// contracts' sources and the build script. Used by the root bootstrap (which then builds; it compares the web
// console's build with `newest` too) and by bin/signalbox.mjs (which then warns).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('..', import.meta.url));

/** The built entry point. */
export const builtEntry = join(server, 'dist', 'main.js');

/** When `path` was last modified (ms), 0 when it does not exist. */
export function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** The newest modification time under `dir`, not counting builds, installed packages and test files. */
export function newest(dir) {
  let max = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'dist') max = Math.max(max, newest(path));
    } else if (!/\.test\.[cm]?[jt]sx?$/.test(entry.name)) max = Math.max(max, mtime(path));
  }
  return max;
}

/** True when dist/main.js is missing or a source it is built from changed after it was written. */
export function serverBuildIsStale() {
  const built = mtime(builtEntry);
  if (built === 0) return true;
  const sources = Math.max(
    newest(join(server, 'src')),
    newest(join(server, '..', 'contracts', 'src')),
    mtime(join(server, 'scripts', 'build.mjs')),
    mtime(join(server, 'scripts', 'server-bundle.mjs')),
  );
  return built < sources;
}
