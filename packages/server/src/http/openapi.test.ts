import { compileErrors, validate } from '@readme/openapi-parser';
import type { FastifySchema } from 'fastify';
import type { OpenAPIV3_1 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZodObject, ZodType } from 'zod';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { API_DOCS_PREFIX, OPENAPI_PATH } from './openapi';

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
  { match: (_, url) => url.startsWith(API_DOCS_PREFIX), reason: 'the reference page and its assets' },
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
  'POST /api/project/:project_id/tasks/:task_id/reject': 'acts on the task of the path',
  'POST /api/project/:project_id/tasks/:task_id/rerun':
    'repeats the task of the path with its own parameters',
  'POST /api/integrations/:alias': 'the raw bytes the sender signed, in any content type',
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

  it('documents the error shape of every /api route', () => {
    // @fastify/swagger writes only operations into a path item.
    const operations = Object.values(doc.paths ?? {}).flatMap(
      (item) => Object.values(item ?? {}) as OpenAPIV3_1.OperationObject[],
    );
    const errorSchema = (op: OpenAPIV3_1.OperationObject) =>
      (op.responses?.['4XX'] as OpenAPIV3_1.ResponseObject | undefined)?.content?.['application/json']
        ?.schema;
    expect(operations.filter((op) => !errorSchema(op))).toEqual([]);
    expect(errorSchema(operations[0]!)).toMatchObject({ required: ['error'] });
  });

  it('documents the success shapes the contracts define', () => {
    const refs = doc.paths?.['/api/project/{project_id}/keys/{id}/refs']?.get?.responses?.['200'] as
      | OpenAPIV3_1.ResponseObject
      | undefined;
    expect(refs?.content?.['application/json']?.schema).toMatchObject({
      properties: { templates: { type: 'array' }, schedules: { type: 'array' } },
    });
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
