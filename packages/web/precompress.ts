import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

/** Files worth compressing: text formats; images other than SVG are compressed already. */
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map|wasm)$/;
/** Below this size a compressed copy saves less than its own headers cost. */
const MIN_BYTES = 1024;

/**
 * Writes `<file>.br` and `<file>.gz` beside every compressible file of the build, so the server sends the smaller
 * one a browser accepts (@fastify/static's preCompressed) without compressing on each request. A copy is kept only
 * when it is smaller than the original.
 */
export function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'signalbox-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = join(config.root, config.build.outDir);
    },
    closeBundle() {
      for (const file of walk(outDir)) {
        if (!COMPRESSIBLE.test(file)) continue;
        const data = readFileSync(file);
        if (data.length < MIN_BYTES) continue;
        const br = brotliCompressSync(data, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
          },
        });
        const gz = gzipSync(data, { level: 9 });
        if (br.length < data.length) writeFileSync(`${file}.br`, br);
        if (gz.length < data.length) writeFileSync(`${file}.gz`, gz);
      }
    },
  };
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}
