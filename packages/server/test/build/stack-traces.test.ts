import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The built server's stack traces: a bundle made as the server's build makes them (a source map without the
// sources), a throw in its TypeScript, and the stacks a plain `node` process prints with the mapper the
// `signalbox` command installs (vitest's own workers map stacks by themselves, so the stacks come from a child).
const mapper = fileURLToPath(new URL('../../bin/stack-traces.mjs', import.meta.url));
const source = `// a comment line, so the bundle's lines differ from the source's
export function fail(reason: string): never {
  const error = new Error(\`failed: \${reason}\`);
  throw error;
}

export async function failLater(): Promise<never> {
  await Promise.resolve();
  return fail('later');
}
`;
const runner = (dist: string) => `
import { mapStackTraces } from ${JSON.stringify(pathToFileURL(mapper).href)};
const mode = process.argv[2];
if (mode !== 'plain') {
  const restore = mapStackTraces(${JSON.stringify(dist)});
  if (mode === 'restored') restore();
}
const bundle = await import(${JSON.stringify(pathToFileURL(join(dist, 'thrower.js')).href)});
const stacks = [];
try { bundle.fail('now'); } catch (error) { stacks.push(error.stack); }
await bundle.failLater().catch((error) => stacks.push(error.stack));
console.log(JSON.stringify(stacks));
`;

describe('stack traces of the built server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-stack-traces-'));
  const sourcePath = join(dir, 'src', 'thrower.ts');
  const runnerPath = join(dir, 'runner.mjs');
  const stacks = (mode: 'mapped' | 'plain' | 'restored'): string[] => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    return JSON.parse(execFileSync(process.execPath, [runnerPath, mode], { env, encoding: 'utf8' }));
  };

  beforeAll(async () => {
    mkdirSync(join(dir, 'src'));
    writeFileSync(sourcePath, source);
    await build({
      entryPoints: [sourcePath],
      outdir: join(dir, 'dist'),
      bundle: true,
      format: 'esm',
      platform: 'node',
      sourcemap: true,
      sourcesContent: false,
      logLevel: 'silent',
    });
    writeFileSync(runnerPath, runner(join(dir, 'dist')));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the TypeScript file, line and column of each frame in the bundle, async frames too', () => {
    const [now, later] = stacks('mapped');
    const lines = now.split('\n');
    expect(lines[0]).toBe('Error: failed: now');
    expect(lines[1]).toBe(`    at Module.fail (${sourcePath}:3:17)`);
    // The runner's own frame is not in the mapped folder: left as V8 writes it.
    expect(lines[2]).toBe(`    at ${pathToFileURL(runnerPath).href}:10:14`);
    expect(later.split('\n').slice(0, 3)).toEqual([
      'Error: failed: later',
      `    at fail (${sourcePath}:3:17)`,
      `    at Module.failLater (${sourcePath}:9:10)`,
    ]);
  });

  it('without it (or once it is put back) the frames name the bundle', () => {
    for (const mode of ['plain', 'restored'] as const) {
      const [now] = stacks(mode);
      expect(now).toContain(`${join(dir, 'dist', 'thrower.js')}:`);
      expect(now).not.toContain(sourcePath);
    }
  });
});
