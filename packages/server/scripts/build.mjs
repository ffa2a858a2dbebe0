#!/usr/bin/env node
// Builds the server for `npm start` and the `signalbox` command: the bundle of server-bundle.mjs into dist/.
//
//   node packages/server/scripts/build.mjs          # or: npm run build -w @signalbox/server
import { fileURLToPath } from 'node:url';
import { bundleServer } from './server-bundle.mjs';

const started = Date.now();
const { files, bytes } = await bundleServer(fileURLToPath(new URL('../dist', import.meta.url)));
console.log(
  `[build] server: ${files} files, ${Math.round(bytes / 1024)} KiB of JavaScript in dist/ (${Date.now() - started} ms)`,
);
