import { compileErrors, validate } from '@readme/openapi-parser';
import type { FastifySchema } from 'fastify';
import Fastify from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZodObject, ZodType, z } from 'zod';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { registerErrorHandler } from './error-handler';
import { API_DOCS_PREFIX, OPENAPI_PATH, responseSerializer } from './openapi';

/**
 * The API description is generated from the routes and the zod schemas they validate with: every route the app
 * registers must appear in it, and every /api route must declare the schemas of what a caller sends, so the
 * description cannot silently lose a route or a request shape.
 */

/** Routes that are not part of the described API, each with the reason. */
const undocumented: {
  match: (method: string, url: string, schema?: FastifySchema) => boolean;
  reason: string;
}[] = [
  { match: (method) => method === 'HEAD', reason: 'Fastify answers HEAD for every GET by itself' },
  { match: (_, url) => url === OPENAPI_PATH, reason: 'the description itself' },
  {
    match: (_, url) => url === '/api/ws',
    reason: 'the WebSocket upgrade of live events (not an HTTP operation)',
  },
  {
    match: (_, url) => url === '/api/internal/runners/ws',
    reason: 'the WebSocket of remote runners (not an HTTP operation; runners/protocol.ts describes it)',
  },
  { match: (_, url) => url.startsWith(API_DOCS_PREFIX), reason: 'the reference page and its assets' },
  {
    match: (method) => method === 'LOCK' || method === 'UNLOCK',
    reason: "LOCK and UNLOCK of Terraform's http backend protocol (methods OpenAPI cannot describe)",
  },
  {
    match: (_, url, schema) => !url.startsWith('/api/') && schema?.hide === true,
    reason: "the web console's static files (@fastify/static hides the routes it adds)",
  },
];

/** /api routes whose POST or PUT carries no body, each with the reason. */
const withoutBody: Record<string, string> = {
  'POST /api/auth/logout': 'ends the session of the request',
  'POST /api/project/:project_id/notifications/test': 'sends a test alert of the project',
  'POST /api/project/:project_id/integrations/aliases': 'creates a random alias',
  'POST /api/project/:project_id/integrations/:id/aliases': 'creates a random alias',
  'POST /api/project/:project_id/tasks/:task_id/confirm': 'acts on the task of the path',
  'POST /api/project/:project_id/workflow-runs/:run_id/stop': 'stops the run of the path',
  'POST /api/project/:project_id/tasks/:task_id/approve': 'acts on the task of the path',
  'POST /api/project/:project_id/templates/:template_id/reconcile':
    'starts an ordinary run of the template of the path',
  'POST /api/project/:project_id/tasks/:task_id/rerun':
    'repeats the task of the path with its own parameters',
  'POST /api/mcp': "a JSON-RPC message of the Model Context Protocol, which the MCP SDK's transport checks",
  'POST /api/integrations/:alias': 'the raw bytes the sender signed, in any content type',
  'POST /api/user/invites/:invite_id/accept': 'answers the invite of the path',
  'POST /api/user/invites/:invite_id/decline': 'answers the invite of the path',
  'POST /api/users/:id/2fas/totp': 'begins a TOTP set-up with a secret the server makes',
  'POST /api/runners/registration-tokens': 'makes a random one-time token',
  'POST /api/project/:project_id/terraform/states/:name':
    'a Terraform state, kept byte for byte as Terraform sends it (checked by the route)',
  'POST /api/project/:project_id/terraform/states/:name/versions/:version_id/rollback':
    'rolls the state back to the version of the path',
  'POST /api/project/:project_id/runners/registration-tokens': 'makes a random one-time token',
};

/** /api routes whose success answer is not a JSON body described by a zod schema, each with the reason. */
const withoutResponseSchema: Record<string, string> = {
  'GET /api/metrics': 'Prometheus text exposition format',
  'POST /api/mcp': 'a JSON-RPC answer of the Model Context Protocol, written by the MCP SDK transport',
  'GET /api/mcp': 'always 405: the MCP endpoint is stateless (no stream to open)',
  'DELETE /api/mcp': 'always 405: the MCP endpoint is stateless (no session to end)',
  'GET /api/project/:project_id/backup':
    'a file download (the project backup the restore route takes as its body)',
  'GET /api/project/:project_id/tasks/:task_id/raw_output': 'the task output as plain text',
  'GET /api/events/export': 'a file download: the events as CSV, a JSON array or JSON lines',
  'GET /api/project/:project_id/events/export':
    'a file download: the events as CSV, a JSON array or JSON lines',
  'GET /api/auth/oidc/:provider/login': "a redirect to the identity provider's sign-in page",
  'GET /api/auth/oidc/:provider/redirect': 'a redirect back into the console after sign-in',
  'GET /api/auth/oidc/:provider/redirect/*': 'a redirect back into the console after sign-in',
};

const isDocumented = ({ method, url, schema }: Harness['app']['routeList'][number]) =>
  !undocumented.some((rule) => rule.match(method, url, schema));
/** `/api/project/:project_id/keys/:id` as OpenAPI spells it: `/api/project/{project_id}/keys/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace('*', '{*}');

describe('API description', () => {
  let h: Harness;
  let doc: OpenAPIV3_1.Document;

  beforeAll(async () => {
    h = await createHarness(testDialects()[0]!);
    const res = await h.anonymous().get(OPENAPI_PATH);
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => h?.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Signalbox API');
    // The parser dereferences in place: validate a copy so the other tests read the document as served.
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
  });

  it('describes every route the app registers, with its method', () => {
    const routes = h.app.routeList.filter(isDocumented);
    expect(routes.length).toBeGreaterThan(50);
    const missing = routes
      .filter((route) => !doc.paths?.[openApiPath(route.url)]?.[route.method.toLowerCase() as 'get'])
      .map((route) => `${route.method} ${route.url}`);
    expect(missing).toEqual([]);
  });

  it('has a schema for the path parameters and the body of every /api route', () => {
    const problems: string[] = [];
    for (const route of h.app.routeList) {
      const { method, url, schema } = route;
      if (!isDocumented(route) || !url.startsWith('/api/')) continue;
      const key = `${method} ${url}`;
      const declared = schema?.params instanceof ZodObject ? Object.keys(schema.params.shape) : [];
      // `:project_id` is read by the project guard for every route under /api/project/:project_id.
      const params = [...url.matchAll(/:(\w+)|\*/g)]
        .map((match) => match[1] ?? '*')
        .filter((name) => name !== 'project_id');
      for (const name of params)
        if (!declared.includes(name)) problems.push(`${key}: no schema for :${name}`);
      if (
        (method === 'POST' || method === 'PUT') &&
        !(schema?.body instanceof ZodType) &&
        !(key in withoutBody)
      )
        problems.push(`${key}: no body schema`);
    }
    expect(problems).toEqual([]);
  });

  it('has a schema for the success answers of every /api route', () => {
    const missing = h.app.routeList
      .filter((route) => isDocumented(route) && route.url.startsWith('/api/'))
      .filter(({ method, url }) => !(`${method} ${url}` in withoutResponseSchema))
      .filter(({ schema }) => {
        const declared = Object.entries((schema?.response ?? {}) as Record<string, unknown>);
        // A zod schema of the JSON body, or the body of another media type (`content`, e.g. text/plain).
        const described = (part: unknown) =>
          part instanceof ZodType || (typeof part === 'object' && part !== null && 'content' in part);
        return !declared.some(([status, part]) => /^[23]/.test(status) && described(part));
      })
      .map(({ method, url }) => `${method} ${url}`);
    expect(missing).toEqual([]);
  });

  it('documents the error shape of every /api route', () => {
    // @fastify/swagger writes only operations into a path item.
    const operations = Object.values(doc.paths ?? {}).flatMap(
      (item) => Object.values(item ?? {}) as OpenAPIV3_1.OperationObject[],
    );
    const errorSchema = (op: OpenAPIV3_1.OperationObject) =>
      (op.responses?.['4XX'] as OpenAPIV3_1.ResponseObject | undefined)?.content?.['application/json']
        ?.schema;
    expect(operations.filter((op) => !errorSchema(op))).toEqual([]);
    // Every operation names the one shared description of the error body.
    expect(new Set(operations.map((op) => JSON.stringify(errorSchema(op))))).toEqual(
      new Set([JSON.stringify({ $ref: '#/components/schemas/Error' })]),
    );
    // Every error answer carries its code beside the English message.
    expect(doc.components?.schemas?.Error).toMatchObject({ required: ['error', 'code'] });
  });

  it('documents the success shapes the contracts define', () => {
    const refs = doc.paths?.['/api/project/{project_id}/keys/{id}/refs']?.get?.responses?.['200'] as
      | OpenAPIV3_1.ResponseObject
      | undefined;
    expect(refs?.content?.['application/json']?.schema).toMatchObject({
      properties: { templates: { type: 'array' }, schedules: { type: 'array' } },
    });
    const project = doc.paths?.['/api/project/{project_id}']?.get?.responses?.['200'] as
      | OpenAPIV3_1.ResponseObject
      | undefined;
    // Integers carry no bounds beyond what the contract says (no safe-integer range on every id).
    expect(project?.content?.['application/json']?.schema).toMatchObject({
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
    });
    expect(JSON.stringify(doc)).not.toContain(String(Number.MAX_SAFE_INTEGER));
  });

  it('serves the reference page and its assets from this server', async () => {
    const page = await h.anonymous().get(`${API_DOCS_PREFIX}/`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '*');
    expect(assets.length).toBeGreaterThan(0);
    expect(assets.filter((asset) => /^(https?:)?\/\//.test(asset))).toEqual([]);
    for (const asset of assets) {
      const res = await h.anonymous().get(new URL(asset, `http://server${API_DOCS_PREFIX}/`).pathname);
      expect([asset, res.statusCode]).toEqual([asset, 200]);
    }
  });
});

describe('response check', () => {
  /** A route that declares `{ id: number }` and answers what the test gives it. */
  async function appAnswering(body: unknown, check: boolean) {
    const app = Fastify();
    app.setSerializerCompiler(responseSerializer(check));
    registerErrorHandler(app);
    app.get(
      '/thing',
      { schema: { response: { 200: z.strictObject({ id: z.number() }) } } },
      async () => body,
    );
    await app.ready();
    return app;
  }

  it('passes a body its schema accepts, byte for byte as JSON.stringify writes it', async () => {
    const app = await appAnswering({ id: 7 }, true);
    const res = await app.inject('/thing');
    expect([res.statusCode, res.body]).toEqual([200, '{"id":7}']);
    await app.close();
  });

  it('fails the request, naming the field, when a checked body drifts from its schema', async () => {
    for (const body of [{ id: '7' }, { id: 7, extra: true }]) {
      const app = await appAnswering(body, true);
      const res = await app.inject('/thing');
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toMatch(/^GET \/thing answered 200 with a body its response schema refuses/);
      expect(res.json().error).toMatch(/id|extra/);
      await app.close();
    }
  });

  it('sends the body unchecked in production', async () => {
    const app = await appAnswering({ id: '7' }, false);
    const res = await app.inject('/thing');
    expect([res.statusCode, res.body]).toEqual([200, '{"id":"7"}']);
    await app.close();
  });
});
