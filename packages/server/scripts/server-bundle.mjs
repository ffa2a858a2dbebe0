// The server's esbuild bundle of src/main.ts: ESM for Node 20 with source maps. npm packages stay external (node
// resolves them from node_modules at run time, so the bundle must lie in this package, beside dist/) except
// @signalbox/contracts, which is TypeScript source, and Kysely (below). Modules that main.ts loads on demand (the
// web app, the user commands) become chunks of their own, so `signalbox help` loads little. Used by build.mjs
// (dist/) and by the process tests (a bundle of the working tree of their own, started in a third of tsx's time).
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// esbuild comes with tsx (a devDependency); it is not a direct dependency of its own yet.
import { build } from 'esbuild';

const server = fileURLToPath(new URL('..', import.meta.url));
const contracts = fileURLToPath(new URL('../../contracts/src/index.ts', import.meta.url));

/** Resolves @signalbox/contracts to its TypeScript source so it is bundled (every other package stays external). */
const bundleContracts = {
  name: 'bundle-contracts',
  setup(b) {
    b.onResolve({ filter: /^@signalbox\/contracts$/ }, () => ({ path: contracts }));
  },
};

/**
 * Packages bundled although they are npm packages: Kysely ships some 260 ES modules, which node resolves, reads and
 * links one by one at every start (a third of a `signalbox user …` command's time). Only packages that no external
 * package imports too may be here: a second copy would be a different class. (zod stays out: the MCP SDK takes
 * zod schemas.)
 */
const bundledPackages = /^kysely(\/|$)/;
const bundleSome = {
  name: 'bundle-some-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      // (@signalbox/contracts never gets here: bundleContracts, the plugin before, resolves it.)
      if (args.kind === 'entry-point' || bundledPackages.test(args.path)) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** Builds the bundle into `outdir` (emptied first); answers its JavaScript files and their total size. */
export async function bundleServer(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: server,
    entryPoints: { main: 'src/main.ts' },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [bundleContracts, bundleSome],
    sourcemap: true,
    // Stack traces need only the mappings; the sources stay on disk (they were two thirds of every map).
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
  return { files: outputs.length, bytes: outputs.reduce((sum, [, o]) => sum + o.bytes, 0) };
}
