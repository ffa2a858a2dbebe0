import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/**
 * Reading Semaphore UI's Swagger 2 description (test/reference/semaphore-api-docs.yml, a copy of the peer's
 * api-docs.yml) for the conformance test: operations, path matching against Fastify routes, response checks,
 * example bodies and query strings.
 */

export type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  enum?: unknown[];
  example?: unknown;
  'x-example'?: unknown;
  'x-nullable'?: boolean;
  minimum?: number;
};

type Parameter = {
  in: string;
  name?: string;
  schema?: Schema;
  $ref?: string;
  required?: boolean;
  enum?: unknown[];
  'x-example'?: unknown;
};

type Operation = {
  parameters?: Parameter[];
  responses?: Record<string, { schema?: Schema; headers?: Record<string, Schema> }>;
  security?: unknown[];
};

export type SwaggerDoc = {
  basePath: string;
  definitions: Record<string, Schema>;
  paths: Record<string, Record<string, Operation>>;
};

export type SwaggerOp = { method: string; path: string; op: Operation; key: string };

const defaultFile = fileURLToPath(new URL('../reference/semaphore-api-docs.yml', import.meta.url));

/** The Swagger file: SIGNALBOX_SWAGGER_FILE (another version of the peer's), else the copy in test/reference. */
export function loadSwagger(file = process.env.SIGNALBOX_SWAGGER_FILE ?? defaultFile): SwaggerDoc {
  return parse(readFileSync(file, 'utf8')) as SwaggerDoc;
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** Every operation as `METHOD /path` (Swagger path, without the /api base path). */
export function swaggerOperations(doc: SwaggerDoc): SwaggerOp[] {
  const out: SwaggerOp[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops))
      if (METHODS.includes(method))
        out.push({ method: method.toUpperCase(), path, op, key: `${method.toUpperCase()} ${path}` });
  return out;
}

const segments = (path: string) => path.replace(/\/+$/, '').split('/').filter(Boolean);
const isParam = (s: string) => /^\{\w+\}$/.test(s) || s.startsWith(':');

/**
 * Whether a Swagger path (`/project/{project_id}/keys/{key_id}`) names the same route as a Fastify URL
 * (`/api/project/:project_id/keys/:id`): same literal segments, a parameter against a parameter (any
 * name). A trailing slash is ignored here; `servesExactPath` checks it separately.
 */
export function samePath(basePath: string, swaggerPath: string, routeUrl: string) {
  const a = segments(basePath + swaggerPath);
  const b = segments(routeUrl);
  return a.length === b.length && a.every((s, i) => (isParam(s) ? isParam(b[i]!) : s === b[i]));
}

/** The routes (method + Fastify URL) that implement a Swagger operation. */
export function matchingRoutes(
  doc: SwaggerDoc,
  op: SwaggerOp,
  routes: { method: string; url: string }[],
): { method: string; url: string }[] {
  return routes.filter((r) => r.method === op.method && samePath(doc.basePath, op.path, r.url));
}

/** The body schema of an operation, if any. */
export function bodySchema(op: SwaggerOp): Schema | undefined {
  return op.op.parameters?.find((p) => p.in === 'body')?.schema;
}

/**
 * The query string of an operation built from its own query parameters: each one's x-example, else its first
 * enum value (`sort=email&order=desc`). Names are encoded as the document spells them (`Key%20type=none`).
 */
export function exampleQuery(op: SwaggerOp): string {
  const pairs: string[] = [];
  for (const p of op.op.parameters ?? []) {
    if (p.in !== 'query' || !p.name) continue;
    const value = p['x-example'] ?? p.enum?.[0];
    if (value !== undefined) pairs.push(`${encodeURIComponent(p.name)}=${encodeURIComponent(String(value))}`);
  }
  return pairs.length ? `?${pairs.join('&')}` : '';
}

/** 2xx status codes Swagger lists for an operation. */
export function successCodes(op: SwaggerOp): number[] {
  return Object.keys(op.op.responses ?? {})
    .map(Number)
    .filter((c) => c >= 200 && c < 300);
}

/** A schema with `$ref` and `allOf` resolved and merged; `def` is the definition name it came from. */
export function resolve(doc: SwaggerDoc, schema: Schema, def?: string): { schema: Schema; def?: string } {
  let current = schema;
  let name = def;
  const extra: Schema = { ...schema };
  delete extra.$ref;
  if (schema.$ref) {
    name = schema.$ref.split('/').pop()!;
    const target = doc.definitions[name];
    if (!target) throw new Error(`unknown definition ${schema.$ref}`);
    const inner = resolve(doc, target, name);
    current = {
      ...inner.schema,
      ...extra,
      properties: { ...inner.schema.properties, ...extra.properties },
      required: [...(inner.schema.required ?? []), ...(extra.required ?? [])],
    };
  }
  if (current.allOf) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    const parts: string[] = [];
    for (const part of current.allOf) {
      const r = resolve(doc, part);
      if (r.def) parts.push(r.def);
      Object.assign(merged.properties!, r.schema.properties);
      merged.required!.push(...(r.schema.required ?? []));
    }
    // An allOf of definitions (Task.params = AnsibleTaskParams + TerraformTaskParams) is its own entity.
    if (!schema.$ref && parts.length) name = parts.join('+');
    const rest = { ...current };
    delete rest.allOf;
    current = {
      ...merged,
      ...rest,
      type: rest.type ?? 'object',
      properties: { ...merged.properties, ...rest.properties },
      required: [...merged.required!, ...(rest.required ?? [])],
    };
  }
  return { schema: current, def: name };
}

export type Problem = {
  /** `GET /project/{project_id}/keys` */
  op: string;
  /** JSON path in the response: `[0].ssh_key_id` */
  at: string;
  field: string;
  def: string;
  problem: string;
  /** fail: required or documented field missing, or a wrong type; report: listed in the definition only. */
  severity: 'fail' | 'report';
};

export type CheckRules = {
  /**
   * Definition (or `Definition.field` for an object nested in another) -> fields our API documents for that
   * entity (a missing one fails).
   */
  spec: Record<string, string[]>;
  /** `Definition.field` that may be null. */
  nullable: Set<string>;
  /** `Definition.field` never expected in a response (write-only secrets, request-only flags). */
  writeOnly: Set<string>;
  /** `Definition.field` whose type the peer's behaviour sets apart from its Swagger type. */
  types?: Record<string, string>;
};

function typeOf(value: unknown) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function typeMatches(expected: string, value: unknown) {
  const actual = typeOf(value);
  if (expected === 'number') return actual === 'number' || actual === 'integer';
  return actual === expected;
}

/** Checks a response value against a schema; returns the problems found (empty when it conforms). */
export function checkValue(
  doc: SwaggerDoc,
  rules: CheckRules,
  op: string,
  schema: Schema,
  value: unknown,
  at = '',
  def = '',
  field = '',
): Problem[] {
  const { schema: s, def: name } = resolve(doc, schema, schema.$ref ? undefined : def);
  const here = name ?? def;
  const problems: Problem[] = [];
  const type = rules.types?.[`${def}.${field}`] ?? s.type ?? (s.properties ? 'object' : undefined);
  if (value === null || value === undefined) return problems; // nullability is judged by the parent
  if (type && !typeMatches(type, value)) {
    problems.push({
      op,
      at: at || '(body)',
      field,
      def,
      problem: `type ${typeOf(value)}, Swagger says ${type}`,
      severity: 'fail',
    });
    return problems;
  }
  if (s.enum && !s.enum.includes(value))
    problems.push({
      op,
      at,
      field,
      def,
      problem: `value ${JSON.stringify(value)} not in enum ${JSON.stringify(s.enum)}`,
      severity: 'report',
    });
  if (type === 'array' && s.items && Array.isArray(value))
    value.forEach((item, i) => {
      problems.push(...checkValue(doc, rules, op, s.items!, item, `${at}[${i}]`, here, field));
    });
  if (type === 'object' && s.properties && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const required = new Set(s.required ?? []);
    // A nested object may be documented on its own (`ProjectInvite.user`), else as its definition.
    const specFields = new Set(rules.spec[`${def}.${field}`] ?? rules.spec[here] ?? []);
    for (const [prop, propSchema] of Object.entries(s.properties)) {
      const path = `${at}.${prop}`;
      const qualified = `${here}.${prop}`;
      if (rules.writeOnly.has(qualified)) {
        if (prop in obj && obj[prop] !== undefined && obj[prop] !== null && obj[prop] !== '')
          problems.push({
            op,
            at: path,
            field: prop,
            def: here,
            problem: 'write-only field in a response',
            severity: 'fail',
          });
        // A write-only field the peer answers (empty) is documented: it must be there, and empty.
        else if (specFields.has(prop) && !(prop in obj))
          problems.push({
            op,
            at: path,
            field: prop,
            def: here,
            problem: 'missing (documented field)',
            severity: 'fail',
          });
        continue;
      }
      if (!(prop in obj) || obj[prop] === undefined) {
        const must = required.has(prop) || specFields.has(prop);
        problems.push({
          op,
          at: path,
          field: prop,
          def: here,
          problem: required.has(prop)
            ? 'missing (required)'
            : specFields.has(prop)
              ? 'missing (documented field)'
              : 'missing',
          severity: must ? 'fail' : 'report',
        });
        continue;
      }
      if (obj[prop] === null) {
        const resolved = resolve(doc, propSchema).schema;
        if (!(resolved['x-nullable'] || propSchema['x-nullable'] || rules.nullable.has(qualified)))
          problems.push({
            op,
            at: path,
            field: prop,
            def: here,
            problem: `null, Swagger says ${resolved.type ?? 'object'}`,
            severity: 'fail',
          });
        continue;
      }
      problems.push(...checkValue(doc, rules, op, propSchema, obj[prop], path, here, prop));
    }
    // Documented fields the Swagger definition does not list must be present too.
    for (const prop of specFields)
      if (!(prop in s.properties) && !(prop in obj))
        problems.push({
          op,
          at: `${at}.${prop}`,
          field: prop,
          def: here,
          problem: 'missing (documented field, not in Swagger)',
          severity: 'fail',
        });
  }
  return problems;
}

/**
 * An example-like request body built from a schema: the definition's example / x-example where given,
 * the first enum value, an id from `ids` for `*_id` fields, and plain values otherwise.
 */
export function exampleBody(
  doc: SwaggerDoc,
  schema: Schema,
  ids: Record<string, unknown>,
  field = '',
): unknown {
  const { schema: s } = resolve(doc, schema);
  if (field && field in ids) return ids[field];
  const example = s['x-example'] ?? s.example;
  if (example !== undefined) return example;
  if (s.enum) return s.enum[0];
  const type = s.type ?? (s.properties ? 'object' : 'string');
  switch (type) {
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 0, 0);
    case 'boolean':
      return false;
    case 'array': {
      // A list of objects gets one example item, so every field of the item is sent too.
      const item = s.items ? resolve(doc, s.items).schema : undefined;
      return item?.properties && s.items ? [exampleBody(doc, s.items, ids)] : [];
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [prop, propSchema] of Object.entries(s.properties ?? {}))
        out[prop] = exampleBody(doc, propSchema, ids, prop);
      return out;
    }
    default:
      // The document gives no password: none is sent (a step that needs one gives it).
      if (field === 'password' || s.format === 'password') return undefined;
      if (s.format === 'email') return 'user@example.com';
      // A time a request may name (an expiry): a week ahead, in the RFC 3339 form Go's time.Time reads.
      if (s.format === 'date-time') return new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
      return field === 'name' || field === 'title' ? 'Test' : '';
  }
}
