import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';
import { precompress } from './precompress';

export default defineConfig({
  plugins: [react(), precompress()],
  server: { proxy: { '/api': { target: 'http://127.0.0.1:3000', ws: true } } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
});
