import { type Coded, coded, jsonDepth, MAX_JSON_DEPTH } from '@signalbox/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config';
import { badRequest, errorBody, forbidden, rejectNul } from '../lib/errors';
import { REQUEST_ID_HEADER } from './logging';

/** The cookie of a signed-in console session: the auth feature sets it, the forgery checks key on it. */
export const SESSION_COOKIE = 'signalbox';

import { parseDeclaredParts, validatePathParams } from './path-params';

/**
 * Guards every request passes before any handler:
 * - JSON bodies nested deeper than MAX_JSON_DEPTH are refused by the body parser itself (400);
 * - U+0000 anywhere in the path parameters, query string or body is refused with a 400 naming the field;
 * - the path parameters, query string and body a route declares (`schema: { params, querystring, body }`) are
 *   validated with their contract;
 * - a state-changing request authenticated by the session cookie must prove it comes from the console itself
 *   (cross-site request forgery), and so must a cookie-authenticated WebSocket upgrade.
 */
export function registerRequestGuards(app: FastifyInstance, config: Pick<Config, 'webRoot'>) {
  registerJsonParser(app);
  app.setValidatorCompiler(validatePathParams);
  app.addHook('preHandler', parseDeclaredParts);
  const ownOrigins = consoleOrigins(config.webRoot);
  // Synchronous hooks in Fastify's callback form (no promise per request); what they throw is the request's error.
  app.addHook('onRequest', (request, _reply, done) => {
    if (cookieAuthenticated(request)) {
      if (STATE_CHANGING.has(request.method)) refuseForgedWrite(request, ownOrigins);
      else if (String(request.headers.upgrade ?? '').toLowerCase() === 'websocket')
        refuseForeignOrigin(request, ownOrigins);
    }
    done();
  });
  app.addHook('preValidation', (request, _reply, done) => {
    rejectNul(request.params, 'path');
    rejectNul(request.query, 'query');
    // Webhook routes keep their body as raw bytes: those are signed, never stored as text.
    if (!Buffer.isBuffer(request.body)) rejectNul(request.body);
    done();
  });
}

/** Fastify's `frameworkErrors`: URLs it cannot route (bad percent-encoding, over-long parameters) get our `{error}`. */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // Fastify answers these before any hook runs, so the request id is added here (registerRequestIds does it for
  // every other response).
  reply.header(REQUEST_ID_HEADER, request.id);
  const answer = (status: number, error: Coded) =>
    reply.status(status).send({ ...errorBody(error), request_id: request.id });
  if (error.code === 'FST_ERR_BAD_URL') return answer(400, coded('url_malformed'));
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return answer(414, coded('path_param_too_long'));
  reply.log.error({ err: error }, 'request failed before routing');
  return answer(500, coded('internal'));
}

/**
 * Fastify's own JSON body parser behind a depth check: a body nested deeper than MAX_JSON_DEPTH is a 400 before it
 * is parsed, so no later walk over it (validation, serialisation, storage) meets unbounded nesting.
 */
function registerJsonParser(app: FastifyInstance) {
  const parseJson = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // An empty body is no body (a DELETE sent with Content-Type: application/json to pass the forgery check).
    if (body === '') return done(null, undefined);
    if (jsonDepth(body as string) > MAX_JSON_DEPTH)
      return done(badRequest(coded('too_deep', { field: 'body', max: MAX_JSON_DEPTH })), undefined);
    parseJson(request, body as string, done);
  });
}

// LOCK and UNLOCK: Terraform's http backend (the built-in state backend).
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'LOCK', 'UNLOCK']);
const CROSS_SITE = coded('cross_site_request');
const NOT_JSON = coded('cookie_needs_json');

/**
 * Requests the browser may send on its own carry the session cookie; an API token must be sent on purpose. A
 * request with a Bearer token is authenticated by the token alone (the cookie is ignored), so only cookie
 * requests need proving.
 */
function cookieAuthenticated(request: FastifyRequest): boolean {
  const authorization = request.headers.authorization;
  if (authorization && /^bearer\s+/i.test(authorization)) return false;
  return Boolean(request.cookies?.[SESSION_COOKIE]);
}

/** The console's origin as SIGNALBOX_WEB_ROOT names it (when that is an absolute http(s) address). */
function consoleOrigins(webRoot: string): Set<string> {
  try {
    const url = new URL(webRoot);
    if (url.protocol === 'http:' || url.protocol === 'https:') return new Set([url.origin]);
  } catch {}
  return new Set();
}

/**
 * Whether an Origin header names this server: its host[:port] equals the request's Host (X-Forwarded-Host when
 * the proxy is trusted), or it is the origin of SIGNALBOX_WEB_ROOT. "null" (sandboxed pages, data: URLs) and
 * anything unparsable are foreign.
 */
function isOwnOrigin(origin: string, request: FastifyRequest, configured: Set<string>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (configured.has(url.origin)) return true;
  if (!request.host) return false;
  try {
    // The request's host read with the origin's scheme, so a default port compares equal with or without it.
    return new URL(`${url.protocol}//${request.host}`).host === url.host;
  } catch {
    return false;
  }
}

function refuseForeignOrigin(request: FastifyRequest, configured: Set<string>) {
  const site = request.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') throw forbidden(CROSS_SITE);
  const origin = request.headers.origin;
  if (origin !== undefined && !isOwnOrigin(origin, request, configured)) throw forbidden(CROSS_SITE);
}

/**
 * A cookie-authenticated write is refused when the browser says it comes from elsewhere: Sec-Fetch-Site cross-site
 * or same-site, or an Origin other than this server's. A POST must further prove it is no HTML form: it passes when
 * the browser says it is same-origin (Origin of this server, or Sec-Fetch-Site: same-origin), else it must be JSON,
 * which a cross-site page cannot send without a CORS preflight this server never grants. PUT, PATCH and DELETE need
 * no such proof: a form cannot send them, and a cross-site script cannot without that preflight, so a script
 * signed in with the cookie may send them without a Content-Type (a body-less DELETE).
 */
function refuseForgedWrite(request: FastifyRequest, configured: Set<string>) {
  refuseForeignOrigin(request, configured);
  if (request.method !== 'POST') return;
  if (request.headers.origin !== undefined) return;
  if (request.headers['sec-fetch-site'] === 'same-origin') return;
  const type = String(request.headers['content-type'] ?? '')
    .replace(/;.*/s, '')
    .trim()
    .toLowerCase();
  if (type !== 'application/json') throw forbidden(NOT_JSON);
}
