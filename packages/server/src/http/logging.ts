import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Config } from '../config';

/** The header a request id is read from (when a proxy set a safe one) and always answered in. */
export const REQUEST_ID_HEADER = 'x-request-id';
/** A request id taken from a caller: short, and nothing that could forge or break a log line. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Fastify's `genReqId`: the caller's X-Request-Id when it is a short safe token, else a fresh UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Routes whose path itself is a credential (an integration alias lets anyone who knows it start a task). */
const SECRET_PATH_ROUTES = new Set(['/api/integrations/:alias']);

/**
 * What a request log line says about the request: method, path, host and peer, as Fastify's own serializer, but
 * never the query string (an OIDC callback carries its authorization code there, and a client may put a token in
 * any URL) and only the route pattern of a route whose path is a secret. Headers, cookies and bodies are never
 * logged.
 */
function requestSummary(request: FastifyRequest) {
  const pattern = request.routeOptions?.url;
  return {
    method: request.method,
    url: pattern && SECRET_PATH_ROUTES.has(pattern) ? pattern : request.url.split('?')[0],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** Whether log lines are written as JSON or for a person: `auto` is pretty on a terminal, JSON anywhere else. */
export function chosenLogFormat(setting: Config['logFormat'], isTerminal = Boolean(process.stdout.isTTY)) {
  if (setting === 'auto') return isTerminal ? 'pretty' : 'json';
  return setting;
}

/** The level request lines are logged at: `auto` is debug on a terminal (a person reading along), info elsewhere. */
export function chosenRequestLogLevel(
  setting: Config['requestLogLevel'],
  isTerminal = Boolean(process.stdout.isTTY),
): 'info' | 'debug' | 'trace' {
  if (setting === 'auto') return isTerminal ? 'debug' : 'info';
  return setting;
}

/**
 * Fastify's per-request lines ("incoming request", "request completed") at the chosen level instead of info; a
 * request that failed is still logged as an error.
 */
class RequestLogController extends LogController {
  constructor(private readonly level: 'info' | 'debug' | 'trace') {
    super();
  }
  override incomingRequest(request: FastifyRequest) {
    request.log[this.level]({ req: request }, 'incoming request');
  }
  override requestCompleted(error: Error | null | undefined, _request: FastifyRequest, reply: FastifyReply) {
    if (error) return super.requestCompleted(error, _request, reply);
    reply.log[this.level]({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Fastify's `logController`: request lines at the configured level. */
export function requestLogController(config: Pick<Config, 'requestLogLevel'>) {
  return new RequestLogController(chosenRequestLogLevel(config.requestLogLevel));
}

/**
 * The app's logger options: the ones given (tests capture lines with a stream), else the configured level and
 * format; pino-pretty is loaded only when the pretty format is chosen. Either way requests are logged through
 * requestSummary.
 */
export async function loggerOptions(
  config: Pick<Config, 'logLevel' | 'logFormat'>,
  given?: FastifyServerOptions['logger'],
): Promise<FastifyServerOptions['logger']> {
  let options = given;
  if (options === undefined) {
    options = { level: config.logLevel };
    if (chosenLogFormat(config.logFormat) === 'pretty') {
      const { default: pretty } = await import('pino-pretty');
      options.stream = pretty();
    }
  }
  if (typeof options !== 'object') return options;
  return { ...options, serializers: { req: requestSummary, ...options.serializers } };
}

/**
 * Every response names its request id in X-Request-Id, and every error body carries it as `request_id`, so a user
 * reporting an error gives the id that finds its log lines.
 */
export function registerRequestIds(app: FastifyInstance) {
  // Hooks that do nothing asynchronous take Fastify's callback (an async hook costs every request a promise).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  app.addHook('preSerialization', (request, reply, payload: unknown, done) => {
    if (reply.statusCode < 400 || !isErrorBody(payload)) return done(null, payload);
    done(null, { ...payload, request_id: request.id });
  });
}

const isErrorBody = (payload: unknown): payload is { error: string } =>
  typeof payload === 'object' &&
  payload !== null &&
  !Array.isArray(payload) &&
  typeof (payload as { error?: unknown }).error === 'string';
