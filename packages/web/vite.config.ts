import { writeFileSync } from 'node:fs';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompress } from './precompress';
import { digestFile, webSourcesDigest } from './sources-digest.mjs';

export default defineConfig({
  plugins: [
    react(),
    precompress(),
    {
      // Last: records what this build was made from (see sources-digest.mjs).
      name: 'signalbox-sources-digest',
      apply: 'build',
      closeBundle() {
        writeFileSync(digestFile, `${webSourcesDigest()}\n`);
      },
    },
  ],
  server: { proxy: { '/api': { target: 'http://127.0.0.1:3000', ws: true } } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
});
