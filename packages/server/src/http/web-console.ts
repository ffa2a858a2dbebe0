import { basename } from 'node:path';
import fastifyStatic from '@fastify/static';
import { coded } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../lib/errors';

/**
 * A build asset whose name carries its content hash (Vite's `assets/<name>-<hash>.<ext>`): its content never changes
 * under that name, so a browser keeps it for a year without asking again.
 */
const HASHED_ASSET = /^[\w.-]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;

/** Cache-Control of a served file: hashed assets are immutable, everything else is revalidated on each use. */
export function cacheControlOf(path: string, root: string): string {
  const relative = path
    .slice(root.length)
    .replace(/\\/g, '/')
    .replace(/\.(br|gz)$/, '');
  if (relative.startsWith('/assets/') && HASHED_ASSET.test(basename(relative)))
    return 'public, max-age=31536000, immutable';
  return 'no-cache';
}

/**
 * The web console at the root: built files as they are, or their brotli/gzip copies written at build time when the
 * browser accepts them (br, then gzip, then identity), and index.html for every other GET outside /api (the
 * console's client-side routes). Responses name Accept-Encoding in Vary, so a shared cache keeps one copy per
 * encoding; ETag and Last-Modified let a browser revalidate what is not immutable (304).
 */
export async function registerWebConsole(app: FastifyInstance, root: string | null) {
  if (root) {
    await app.register(fastifyStatic, {
      root,
      prefix: '/',
      wildcard: false,
      index: ['index.html'],
      preCompressed: true,
      // Cache-Control is set per file below (send's own would be `public, max-age=0` for all).
      cacheControl: false,
      setHeaders: (res, path) => {
        res.setHeader('cache-control', cacheControlOf(path, root));
        res.setHeader('vary', 'Accept-Encoding');
      },
    });
  }
  app.setNotFoundHandler((request, reply) => {
    if (root && (request.method === 'GET' || request.method === 'HEAD') && !request.url.startsWith('/api/'))
      return reply.sendFile('index.html');
    return reply
      .status(404)
      .send(
        errorBody(
          coded('route_not_found', { method: request.method, path: request.url.split('?')[0] ?? '' }),
        ),
      );
  });
}
