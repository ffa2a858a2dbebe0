import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { errorResponse } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema';
import { ZodObject, ZodType, z } from 'zod';
import { version } from '../version';
import { pathIds } from './path-params';
import { routeScope } from './route-scopes';

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
    // `z.number().int()` bounds every integer to the safe range: true of every JSON number we write, so noise.
    override: ({ jsonSchema }) => {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
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

const ERROR_SCHEMA_REF = '#/components/schemas/Error';

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
export const transform: NonNullable<FastifyDynamicSwaggerOptions['transform']> = ({ schema, url, route }) => {
  const source = (schema ?? {}) as Record<string, unknown>;
  const documented: Record<string, unknown> = { ...source };
  // What an API token limited to scopes needs here (access/token-limits.ts decides it the same way).
  if (url.startsWith('/api/') && route && !route.config?.public) {
    const scope = routeScope([route.method].flat()[0] ?? 'GET', url, route.config);
    const note =
      scope === undefined || scope === 'account'
        ? 'API tokens: only a session or a token with full rights.'
        : `API tokens: needs the \`${scope}\` scope.`;
    documented.description =
      typeof source.description === 'string' ? `${source.description}\n\n${note}` : note;
  }
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
  // One shared description of the error body, instead of a copy in every operation.
  if (url.startsWith('/api/') && !response['4xx'])
    response['4xx'] = { description: errorJsonSchema.description, $ref: ERROR_SCHEMA_REF };
  documented.response = response;
  documented.tags ??= [tagOf(url)];
  return { schema: documented as typeof schema, url };
};

/**
 * A body the route has already serialised (a list assembled from kept JSON): its serializer sends the text as it is,
 * and checks it like any other body when responses are checked. `preSerialized` types it as the route's answer.
 */
export class JsonText {
  constructor(readonly json: string | Buffer) {}
}
export const preSerialized = <T>(json: string | Buffer): T => new JsonText(json) as unknown as T;

/** Thrown when a route answers with a body its declared response schema refuses (only when responses are checked). */
export class ResponseSchemaMismatch extends Error {}

/**
 * The serializer of a route's response: JSON.stringify, exactly as for a route without a response schema, so
 * declaring one never changes what a client receives. With `check`, the JSON about to be sent is first parsed back
 * and validated against the declared zod schema, and a body the schema refuses fails the request (500, the reason in
 * the log) — the tests run this way, so the description cannot drift from what the routes answer.
 */
export function responseSerializer(check: boolean) {
  return ({ schema, method, url, httpStatus }: FastifyRouteSchemaDef<unknown>) =>
    (data: unknown) => {
      const json = data instanceof JsonText ? data.json : JSON.stringify(data);
      if (check && schema instanceof ZodType) {
        const result = schema.safeParse(json === undefined ? undefined : JSON.parse(json.toString()));
        if (!result.success)
          throw new ResponseSchemaMismatch(
            `${method} ${url} answered ${httpStatus} with a body its response schema refuses: ${z.prettifyError(result.error)}`,
          );
      }
      // Typed as a string, but a Buffer (a list assembled from kept bytes) goes out as it is: Fastify sends
      // strings and Buffers alike once serialised.
      return json as string;
    };
}

/** The console's mark (packages/web/public/favicon.svg): the reference's logo and icon. */
const SIGNALBOX_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><title>Signalbox</title><rect width="64" height="64" rx="14" fill="#2f5bd3"/><path d="M14 40h8l6-16 8 24 6-14h8" fill="none" stroke="#fff" stroke-width="5" stroke-linecap="round" stroke-linejoin="round"/></svg>';

/**
 * Dark like the console: the console's choice (local storage `darkMode`, same origin), else the system's
 * prefers-color-scheme. Swagger UI has no dark theme of its own: the page is inverted and its images turned back.
 */
const DOCS_THEME_JS = `(function () {
  var stored = null;
  try { stored = localStorage.getItem('darkMode'); } catch (e) {}
  var dark = stored === 'dark' || stored === 'true' || stored === '1' ||
    (stored !== 'light' && stored !== 'false' && stored !== '0' &&
      !!window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
  if (dark) document.documentElement.classList.add('signalbox-dark');
})();`;
const DOCS_THEME_CSS = `
.swagger-ui .topbar { background: #2f5bd3; }
.swagger-ui .topbar .link img { height: 36px; }
html.signalbox-dark { background: #121417; filter: invert(0.9) hue-rotate(180deg); color-scheme: dark; }
html.signalbox-dark img { filter: invert(1) hue-rotate(180deg); }
`;

/**
 * Serves the OpenAPI 3.1 description at /api/openapi.json and the Swagger UI reference at /api/docs, both public and
 * both from this server (no CDN). Registered before the routes: @fastify/swagger collects them as they are added.
 * `checkResponses` validates every response against its declared schema (see responseSerializer).
 */
export async function registerOpenApi(app: FastifyInstance, { checkResponses = false } = {}) {
  app.setSerializerCompiler(responseSerializer(checkResponses));
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
        schemas: { Error: errorJsonSchema },
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
      // Swagger UI would otherwise show a badge fetched from validator.swagger.io. Its groups open collapsed: with
      // every one of our 140 operations listed at once, Swagger UI stopped rendering the list part-way.
      uiConfig: { validatorUrl: null, docExpansion: 'none' },
      // Signalbox's name and mark instead of Fastify's and Swagger's, and the console's light or dark.
      logo: { type: 'image/svg+xml', content: SIGNALBOX_LOGO, href: '/', target: '_self' },
      theme: {
        title: 'Signalbox API reference',
        favicon: [
          {
            filename: 'favicon.svg',
            rel: 'icon',
            type: 'image/svg+xml',
            sizes: 'any',
            content: SIGNALBOX_LOGO,
          },
        ],
        js: [{ filename: 'signalbox-theme.js', content: DOCS_THEME_JS }],
        css: [{ filename: 'signalbox-theme.css', content: DOCS_THEME_CSS }],
      },
    });
  });
}
