import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app';
import { loadConfig } from '../config';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * The web console as a browser fetches it, from a build folder laid out as Vite writes it with the brotli and gzip
 * copies the build adds: the encoding chosen by Accept-Encoding, caching by file (hashed assets for a year,
 * index.html and the client-side routes revalidated), HEAD and conditional requests.
 */
describe('web console delivery', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-web-console-'));
  const web = join(dataDir, 'web');
  const script = `console.log(${JSON.stringify('signalbox '.repeat(400))});\n`;
  const asset = '/assets/index-Dnx99adT.js';
  const index =
    '<!doctype html><html><body><div id="root"></div><script src="/assets/index-Dnx99adT.js"></script></body></html>\n';
  let app: FastifyInstance;

  beforeAll(async () => {
    mkdirSync(join(web, 'assets'), { recursive: true });
    writeFileSync(join(web, 'index.html'), index);
    writeFileSync(join(web, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(web, asset), script);
    writeFileSync(join(web, `${asset}.br`), brotliCompressSync(script));
    writeFileSync(join(web, `${asset}.gz`), gzipSync(script));
    const config = loadConfig({}, { dataDir, dbUrl: `sqlite://${dataDir}/test.db`, bcryptCost: 4 });
    app = (await buildApp(config, { background: false, logger: false, webDir: web })).app;
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') =>
    app.inject({ method, url, headers });

  it('sends a hashed asset brotli-compressed when accepted, and keeps it for a year', async () => {
    const res = await get(asset, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.headers['cache-control']).toBe(IMMUTABLE);
    expect(brotliDecompressSync(res.rawPayload).toString()).toBe(script);
    expect(res.rawPayload.length).toBeLessThan(script.length / 10);
  });

  it('sends gzip to a client that takes gzip only, and the file as it is to one that names no encoding', async () => {
    const gz = await get(asset, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gz.rawPayload).toString()).toBe(script);

    const plain = await get(asset);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    expect(plain.headers['cache-control']).toBe(IMMUTABLE);
    expect(plain.body).toBe(script);

    const identityOnly = await get(asset, { 'accept-encoding': 'identity' });
    expect(identityOnly.headers['content-encoding']).toBeUndefined();
    expect(identityOnly.body).toBe(script);
  });

  it('answers HEAD with the headers of the chosen encoding and no body', async () => {
    const res = await get(asset, { 'accept-encoding': 'br' }, 'HEAD');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['cache-control']).toBe(IMMUTABLE);
    expect(res.rawPayload.length).toBe(0);
  });

  it('answers 304 to a browser revalidating with the ETag it has, per encoding', async () => {
    const first = await get(asset, { 'accept-encoding': 'br' });
    const etag = first.headers.etag as string;
    expect(etag).toBeTruthy();
    const again = await get(asset, { 'accept-encoding': 'br', 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    // The gzip copy is another representation: the brotli ETag does not match it.
    const other = await get(asset, { 'accept-encoding': 'gzip', 'if-none-match': etag });
    expect(other.statusCode).toBe(200);
    expect(gunzipSync(other.rawPayload).toString()).toBe(script);
  });

  it('has index.html and client-side routes revalidated on every load', async () => {
    for (const url of ['/', '/index.html', '/project/1/templates', '/auth/login?next=%2F']) {
      const res = await get(url, { 'accept-encoding': 'gzip, br' });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.body, url).toBe(index);
    }
    const root = await get('/');
    const revalidated = await get('/', { 'if-none-match': root.headers.etag as string });
    expect(revalidated.statusCode).toBe(304);
  });

  it('revalidates files without a content hash, and leaves /api paths to the API', async () => {
    const icon = await get('/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
    const missing = await get('/api/no-such-route');
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
    expect(missing.headers['cache-control']).toBeUndefined();
    // A missing asset is not answered with index.html's long-lived headers.
    const gone = await get('/assets/gone-AAAAAAAA.js');
    expect(gone.headers['cache-control']).not.toBe(IMMUTABLE);
  });
});
