import { idParam } from '@signalbox/contracts';
import type { FastifySchemaCompiler, FastifyTypeProvider } from 'fastify';
import { ZodObject, type ZodType, z } from 'zod';
import { fromZod } from '../lib/errors';

/**
 * Types a route's `request.params` from the zod schema it declares (`schema: { params: pathIds('id') }`), as
 * fastify/demo does with its schemas: a handler reads `request.params.id` as the number the contract produced.
 */
export interface ZodTypeProvider extends FastifyTypeProvider {
  readonly validator: this['schema'] extends ZodType ? z.output<this['schema']> : unknown;
  readonly serializer: this['schema'] extends ZodType ? z.input<this['schema']> : unknown;
}

/** The path parameters of a route that names rows by id (`:id`, `:task_id`…), each read with `idParam`. */
export function pathIds<const K extends string>(...names: K[]) {
  return z.object(Object.fromEntries(names.map((name) => [name, idParam])) as Record<K, typeof idParam>);
}

/**
 * Fastify's validator compiler: validates the path parameters a route declares before its handler runs (after
 * the request guards and the project guard, which run at preValidation). Each parameter is a bare value read on
 * its own, in the order declared, so a bad one is refused exactly as `parse(idParam, value)` refuses it; the
 * parameters a route does not declare (`:project_id`, read by the project guard) are left as they are.
 *
 * Only path parameters are declared on routes. Query strings and bodies are read in the handler with `parse`,
 * where the order of its checks needs them: some routes must answer 403 or 404 before they look at the body
 * (a user editing someone else, a stop request for a task that does not exist), and Fastify hands a validator
 * `null` for an absent body, which `parse` tells apart from a JSON `null`.
 */
export const validatePathParams: FastifySchemaCompiler<unknown> = ({ schema, httpPart, method, url }) => {
  if (httpPart !== 'params' || !(schema instanceof ZodObject))
    throw new Error(`${method} ${url}: only path parameters are declared as a zod object on a route`);
  const shape = Object.entries(schema.shape as Record<string, ZodType>);
  return (data) => {
    const params = { ...(data as Record<string, unknown>) };
    for (const [name, param] of shape) {
      const result = param.safeParse(params[name]);
      if (!result.success) return { error: fromZod(result.error) };
      params[name] = result.data;
    }
    return { value: params };
  };
};
