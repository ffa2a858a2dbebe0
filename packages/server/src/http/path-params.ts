import { idParam, noContent } from '@signalbox/contracts';
import type { FastifyReply, FastifyRequest, FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import { ZodObject, ZodType, z } from 'zod';
import { fromZod, parse } from '../lib/errors';

/**
 * Types a route's `request.params`, `request.query` and `request.body` from the zod schemas it declares
 * (`schema: { params: pathIds('id'), body: keyCreateInput }`), as fastify/demo does with its schemas: a handler
 * reads `request.params.id` as the number the contract produced. The same schemas describe the route in the
 * OpenAPI document (http/openapi.ts).
 */
export interface ZodTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends ZodType ? z.output<this['schema']> : unknown;
  // A status declared `noContent` has no body: the handler calls `reply.send()` without one.
  readonly serializer: this['schema'] extends z.ZodNull
    ? undefined
    : this['schema'] extends ZodType
      ? z.input<this['schema']>
      : unknown;
}

/** A 304 Not Modified answer (no body): the client's copy, named by its ETag, is still the page. */
export const notModified = noContent.describe('Not modified: the copy named by If-None-Match is current');

/** The answers of a route that succeeds with 204 and no body (its handler calls `reply.status(204).send()`). */
export const noContentResponse = { 204: noContent };

/** The path parameters of a route that names rows by id (`:id`, `:task_id`…), each read with `idParam`. */
export function pathIds<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, idParam])) as Record<K, typeof idParam>);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The handler parses the body and query string it declares itself (with `parse` and the very schema the route
     * declares), because it must answer 403 or 404 before it looks at them (a user editing someone else, a stop
     * request for a task that does not exist). The declared schemas then only document the route.
     */
    parsesInHandler?: boolean;
  }
}

/**
 * Fastify's validator compiler: validates the path parameters a route declares before its handler runs (after
 * the request guards and the project guard, which run at preValidation). Each parameter is a bare value read on
 * its own, in the order declared, so a bad one is refused exactly as `parse(idParam, value)` refuses it; the
 * parameters a route does not declare (`:project_id`, read by the project guard) are left as they are.
 *
 * A declared query string or body passes here untouched and is parsed by `parseDeclaredParts` just before the
 * handler: Fastify hands a validator `null` for an absent body, which `parse` tells apart from a JSON `null`.
 */
export const validatePathParams: FastifySchemaCompiler<unknown> = ({ schema, httpPart, method, url }) => {
  if ((httpPart === 'body' || httpPart === 'querystring') && schema instanceof ZodType) return () => true;
  if (httpPart !== 'params' || !(schema instanceof ZodObject))
    throw new Error(
      `${method} ${url}: only path parameters, query string and body are declared as zod on a route`,
    );
  const shape = Object.entries(schema.shape as Record<string, ZodType>);
  return (data) => {
    const params = { ...(data as Record<string, unknown>) };
    for (const [name, param] of shape) {
      const result = param.safeParse(params[name], { reportInput: true });
      if (!result.success) return { error: fromZod(result.error, [name]) };
      params[name] = result.data;
    }
    return { value: params };
  };
};

/**
 * A preHandler hook: parses the query string and then the body a route declares with `parse`, as its handler did
 * before the schema moved onto the route, so a refused value answers the same 400, message and fields. Runs after
 * every preValidation check (forged requests, NUL characters, the project guard) and the path parameters.
 */
export function parseDeclaredParts(request: FastifyRequest, _reply: FastifyReply, done: () => void) {
  const { schema, config } = request.routeOptions;
  if (schema && !config.parsesInHandler) {
    if (schema.querystring instanceof ZodType) request.query = parse(schema.querystring, request.query);
    if (schema.body instanceof ZodType) request.body = parse(schema.body, request.body);
  }
  done();
}
