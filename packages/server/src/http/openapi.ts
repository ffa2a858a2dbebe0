import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { errorResponse } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { ZodObject, ZodType, z } from 'zod';
import { version } from '../version';
import { pathIds } from './path-params';

/** Where the OpenAPI description and its browsable reference are served. */
export const OPENAPI_PATH = '/api/openapi.json';
export const API_DOCS_PREFIX = '/api/docs';

const PROJECT_PREFIX = '/api/project/:project_id';
const projectParams = pathIds('project_id');

/** A route's request and response parts that may be declared as zod schemas. */
const requestParts = ['params', 'querystring', 'body'] as const;

/**
 * A zod schema as JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Request parts describe what a caller sends
 * (`io: 'input'`: the value before defaults and transforms), responses what the server returns. A type JSON Schema
 * cannot say (a preprocess step, a custom check) is left open rather than failing the whole document.
 */
function toJsonSchema(schema: ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return json;
}

const asJsonSchema = (part: unknown, io: 'input' | 'output') =>
  part instanceof ZodType ? toJsonSchema(part, io) : part;

/** The `{ error, code }` every refused request answers with (see http/error-handler.ts). */
const errorJsonSchema = {
  description:
    'The request was refused: `error` says why in English, `code` is stable for clients to branch on.',
  ...toJsonSchema(errorResponse, 'output'),
};

/** The reference groups operations by what they act on: the first path segment after /api or the project. */
function tagOf(url: string): string {
  const rest = url.startsWith(PROJECT_PREFIX) ? url.slice(PROJECT_PREFIX.length) : url.slice('/api'.length);
  const segment = rest.split('/').find((part) => part && !part.startsWith(':'));
  return url.startsWith(PROJECT_PREFIX) ? `project ${segment ?? ''}`.trim() : (segment ?? 'api');
}

/**
 * Turns the zod schemas a route declares into the JSON Schema @fastify/swagger expects, and documents the common
 * error shape for every /api route. The route's own schema object (the one Fastify validates with) is not changed.
 */
export const transform: NonNullable<FastifyDynamicSwaggerOptions['transform']> = ({ schema, url }) => {
  const source = (schema ?? {}) as Record<string, unknown>;
  const documented: Record<string, unknown> = { ...source };
  // The project guard reads `:project_id` for every route under it; the routes declare only their own parameters.
  if (url.startsWith(PROJECT_PREFIX))
    documented.params = projectParams.extend(source.params instanceof ZodObject ? source.params.shape : {});
  for (const part of requestParts)
    if (documented[part]) documented[part] = asJsonSchema(documented[part], 'input');
  const response = Object.fromEntries(
    Object.entries((source.response ?? {}) as Record<string, unknown>).map(([status, part]) => [
      status,
      asJsonSchema(part, 'output'),
    ]),
  );
  if (url.startsWith('/api/') && !response['4xx']) response['4xx'] = errorJsonSchema;
  documented.response = response;
  documented.tags ??= [tagOf(url)];
  return { schema: documented as typeof schema, url };
};

/**
 * Serves the OpenAPI 3.1 description at /api/openapi.json and the Swagger UI reference at /api/docs, both public and
 * both from this server (no CDN). Registered before the routes: @fastify/swagger collects them as they are added.
 *
 * Response schemas are documentation only: every response is serialised with JSON.stringify, exactly as a route
 * without a response schema is, so declaring one never changes what a client receives.
 */
export async function registerOpenApi(app: FastifyInstance) {
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Signalbox API',
        version,
        description:
          'Every route of the Signalbox server. Sign in with POST /api/auth/login (session cookie) or send an API ' +
          'token as `Authorization: Bearer <token>`.',
      },
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: 'signalbox' },
          token: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ session: [] }, { token: [] }],
    },
    transform,
  });
  app.get(OPENAPI_PATH, { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  // The reference page and its assets are public like the description they show (the auth hook reads `public`).
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true };
    });
    await docs.register(swaggerUi, {
      routePrefix: API_DOCS_PREFIX,
      // Swagger UI would otherwise show a badge fetched from validator.swagger.io.
      uiConfig: { validatorUrl: null },
    });
  });
}
