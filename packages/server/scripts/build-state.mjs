// Whether the server's build (dist/) is missing or older than what it is built from: the server's sources, the
// contracts' sources and the build script. Used by the root bootstrap (which then builds) and by
// bin/signalbox.mjs (which then warns). Test files do not go into the build and are not counted.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const server = fileURLToPath(new URL('..', import.meta.url));

/** The built entry point. */
export const builtEntry = join(server, 'dist', 'main.js');

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function newest(dir) {
  let max = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) max = Math.max(max, newest(path));
    else if (!entry.name.endsWith('.test.ts')) max = Math.max(max, mtime(path));
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
  );
  return built < sources;
}
