#!/usr/bin/env node
// The `signalbox` command run from the TypeScript sources through tsx, without a build: for development and
// for the tests that spawn the CLI or the server (they test the working tree as it is). bin/signalbox.mjs runs
// the build.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
await main(process.argv.slice(2));
