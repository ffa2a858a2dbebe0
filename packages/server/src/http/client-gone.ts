import type { FastifyInstance } from 'fastify';
import { ReadScope } from '../db/client-gone';

/**
 * A GET whose client closes the connection before the answer stops its database reads (see db/client-gone.ts).
 * Only reads: GET and HEAD change nothing a client asks for. WebSocket upgrades are left out — their sockets live on
 * past the request that opened them, and their work with them.
 */
export function stopReadsWhenClientLeaves(app: FastifyInstance) {
  app.addHook('onRequest', (request, reply, done) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.headers.upgrade) return done();
    const scope = new ReadScope();
    const response = reply.raw;
    response.once('close', () => {
      if (!response.writableFinished) scope.end();
    });
    scope.run(done);
  });
}
