import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// @ts-expect-error: a JavaScript module of the build scripts, without types.
import { bundleServer } from '../../scripts/server-bundle.mjs';

// Global setup of the tiers that start server and CLI processes: one bundle of the working tree, built once per
// run (≈ 0.2 s) and started by every process test in a third of the time tsx takes to load the sources. It lies
// beside dist/ (the server's packages resolve from this package's node_modules) under a name of this run's own,
// and is removed when the run ends.

const server = fileURLToPath(new URL('../..', import.meta.url));

export default async function setup() {
  // The system and executor tiers run in one vitest process: the first builds, the second uses that bundle.
  const built = process.env.SIGNALBOX_TEST_SERVER_BIN;
  if (built && existsSync(built)) return () => {};
  const dir = join(server, `.test-bundle-${process.pid}-${randomBytes(4).toString('hex')}`);
  await bundleServer(dir);
  const bin = join(dir, 'signalbox.mjs');
  writeFileSync(
    bin,
    // As the `signalbox` command runs the build: stack traces mapped to the sources when they are printed.
    `import { mapStackTraces } from ${JSON.stringify(pathToFileURL(join(server, 'bin', 'stack-traces.mjs')).href)};\n` +
      'mapStackTraces(import.meta.dirname);\n' +
      "const { main } = await import('./main.js');\nawait main(process.argv.slice(2));\n",
  );
  process.env.SIGNALBOX_TEST_SERVER_BIN = bin;
  return () => {
    delete process.env.SIGNALBOX_TEST_SERVER_BIN;
    rmSync(dir, { recursive: true, force: true });
  };
}
