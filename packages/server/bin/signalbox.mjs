#!/usr/bin/env node
// The `signalbox` command: runs the built server (dist/, made by `npm run build`; `npm start` builds it when the
// sources are newer). Development and tests run the TypeScript sources through tsx: bin/signalbox-src.mjs.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { builtEntry, serverBuildIsStale } from '../scripts/build-state.mjs';
import { mapStackTraces } from './stack-traces.mjs';

if (!existsSync(builtEntry)) {
  console.error(
    'signalbox: the server is not built (no packages/server/dist/main.js).\n' +
      'Run `npm run build` (`npm start` builds it by itself), or run the sources through tsx with\n' +
      '`node packages/server/bin/signalbox-src.mjs`.',
  );
  process.exit(1);
}
if (serverBuildIsStale())
  console.error('signalbox: warning: the server sources changed after the build; run `npm run build`.');
// Stack traces point into src/*.ts (as with `node --enable-source-maps`, but each map is read when first needed).
mapStackTraces(dirname(builtEntry));
const { main } = await import(pathToFileURL(builtEntry).href);
await main(process.argv.slice(2));
