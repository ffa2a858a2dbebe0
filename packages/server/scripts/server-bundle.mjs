// The server's esbuild bundle of src/main.ts: ESM for Node 20 with source maps. npm packages stay external (node
// resolves them from node_modules at run time, so the bundle must lie in this package, beside dist/) except
// @signalbox/contracts, which is TypeScript source and is bundled. Modules that main.ts loads on demand (the web
// app, the user commands) become chunks of their own, so `signalbox help` loads little. Used by build.mjs (dist/)
// and by the process tests (a bundle of the working tree of their own, started in a third of tsx's time).
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
    packages: 'external',
    plugins: [bundleContracts],
    sourcemap: true,
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
  return { files: outputs.length, bytes: outputs.reduce((sum, [, o]) => sum + o.bytes, 0) };
}
