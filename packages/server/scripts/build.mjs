#!/usr/bin/env node
// Builds the server for `npm start` and the `signalbox` command: one esbuild bundle of src/main.ts into dist/
// (ESM for Node 20, with source maps). npm packages stay external (node resolves them from node_modules at run
// time) except @signalbox/contracts, which is TypeScript source and is bundled. Modules that main.ts loads on
// demand (the web app, the user commands) become chunks of their own, so `signalbox help` loads little.
//
//   node packages/server/scripts/build.mjs          # or: npm run build -w @signalbox/server
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
// esbuild comes with tsx (a devDependency); it is not a direct dependency of its own yet.
import { build } from 'esbuild';

const server = fileURLToPath(new URL('..', import.meta.url));
const outdir = fileURLToPath(new URL('../dist', import.meta.url));
const contracts = fileURLToPath(new URL('../../contracts/src/index.ts', import.meta.url));

/** Resolves @signalbox/contracts to its TypeScript source so it is bundled (every other package stays external). */
const bundleContracts = {
  name: 'bundle-contracts',
  setup(b) {
    b.onResolve({ filter: /^@signalbox\/contracts$/ }, () => ({ path: contracts }));
  },
};

rmSync(outdir, { recursive: true, force: true });
const started = Date.now();
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
const kib = Math.round(outputs.reduce((sum, [, o]) => sum + o.bytes, 0) / 1024);
console.log(
  `[build] server: ${outputs.length} files, ${kib} KiB of JavaScript in dist/ (${Date.now() - started} ms)`,
);
