import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the server's files on disk are, the same whether this code runs from the TypeScript sources
 * (packages/server/src/…, through tsx) or from the build (packages/server/dist/…, one bundle plus chunks):
 * the package root is found by walking up from this module to the folder holding the server's package.json,
 * so no other module resolves paths from its own `import.meta.url`.
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === '@signalbox/server')
      return dir;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`No @signalbox/server package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

/** packages/server: holds package.json, demo/ and (once built) dist/. */
export const packageRoot = findPackageRoot();

/** The server's package.json. */
export const packageManifest = join(packageRoot, 'package.json');

/** The built web console (packages/web/dist/), served at the root when it exists. */
export const webDist = join(packageRoot, '..', 'web', 'dist');

/** The example repository shipped with Signalbox (packages/server/demo); each demo project gets a copy. */
export const demoRepository = join(packageRoot, 'demo');

/**
 * Everything of the install a task must never see: the monorepo checkout (with node_modules) when the server runs
 * from one, else the server package alone.
 */
export const installRoot = (() => {
  const root = join(packageRoot, '..', '..');
  try {
    return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name === 'signalbox'
      ? root
      : packageRoot;
  } catch {
    return packageRoot;
  }
})();
