import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { safeEqual } from '../../lib/crypto';

/**
 * Pure webhook logic: reading values out of a request, matchers, extracted values and signature checks.
 * Nothing here touches the database, so it is unit-tested directly.
 */

/** One incoming request as the rules see it. The body is parsed as JSON at most once, on first use. */
export class WebhookRequest {
  private parsed: { value: unknown } | undefined;

  constructor(
    readonly headers: IncomingHttpHeaders,
    readonly raw: Buffer,
  ) {}

  get text(): string {
    return this.raw.toString('utf8');
  }

  /** The body as JSON, or undefined when it is empty or not JSON. */
  get json(): unknown {
    if (!this.parsed) {
      let value: unknown;
      try {
        value = this.raw.length > 0 ? JSON.parse(this.text) : undefined;
      } catch {
        value = undefined;
      }
      this.parsed = { value };
    }
    return this.parsed.value;
  }

  header(name: string): string | undefined {
    const value = this.headers[name.toLowerCase()];
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/**
 * Follows a dotted path through parsed JSON: `repository.full_name`, `commits.0.id` (or `commits.[0].id`,
 * `commits[0].id`). Only own properties are followed, so `__proto__` or `constructor` find nothing.
 */
export function jsonPath(value: unknown, path: string): unknown {
  const segments = path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((s) => s !== '');
  let current = value;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (current !== null && typeof current === 'object' && Object.hasOwn(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}

/** A value as matchers compare it: text as is, whole numbers without a fraction, objects as JSON. */
export function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? value.toFixed(0) : String(value);
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

type Source = { source: string; body_data_type: string; key: string };

/** Reads the value a matcher or extracted value points at; undefined when it is absent. */
export function readValue(request: WebhookRequest, { source, body_data_type, key }: Source): unknown {
  if (source === 'header') return request.header(key);
  if (body_data_type === 'string') return request.text;
  return jsonPath(request.json, key);
}

export type MatcherRule = {
  match_type: string;
  body_data_type: string;
  key: string;
  method: string;
  value: string;
};

export function matches(request: WebhookRequest, rule: MatcherRule): boolean {
  const actual = asText(
    readValue(request, { source: rule.match_type, body_data_type: rule.body_data_type, key: rule.key }),
  );
  switch (rule.method) {
    case 'equals':
      return actual === rule.value;
    case 'unequals':
      return actual !== rule.value;
    case 'contains':
      return actual?.includes(rule.value) ?? false;
    default:
      return false;
  }
}

export type ExtractRule = {
  value_source: string;
  body_data_type: string;
  key: string;
  variable: string;
  variable_type: string;
};

/**
 * Extracted values: `environment` ones become variables of the task's environment, `task` ones its params.
 * JSON values keep their JSON type; absent values are left out.
 */
export function extract(request: WebhookRequest, rules: ExtractRule[]) {
  const environment: Record<string, unknown> = {};
  const params: Record<string, unknown> = {};
  for (const rule of rules) {
    const value = readValue(request, {
      source: rule.value_source,
      body_data_type: rule.body_data_type,
      key: rule.key,
    });
    if (value === undefined) continue;
    if (rule.variable_type === 'task') params[rule.variable] = value;
    else environment[rule.variable] = value;
  }
  return { environment, params };
}

const hmacHex = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

export type AuthRule = { auth_method: string; auth_header: string };

/**
 * Checks a request against an integration's auth method. `secret` is the key's password; an empty or missing
 * secret never authenticates a method that needs one.
 */
export function verifyAuth(request: WebhookRequest, rule: AuthRule, secret: string | undefined): boolean {
  if (!rule.auth_method) return true;
  if (!secret) return false;
  switch (rule.auth_method) {
    case 'github': {
      const given = request.header('x-hub-signature-256')?.trim() ?? '';
      if (!given.toLowerCase().startsWith('sha256=')) return false;
      return safeEqual(given.slice(7).toLowerCase(), hmacHex(secret, request.raw));
    }
    case 'hmac': {
      const given = (request.header(rule.auth_header)?.trim() ?? '').replace(/^sha256=/i, '');
      if (!given) return false;
      return safeEqual(given.toLowerCase(), hmacHex(secret, request.raw));
    }
    case 'token': {
      const given = request.header(rule.auth_header);
      if (given === undefined) return false;
      return safeEqual(given, secret);
    }
    default:
      return false;
  }
}

/** Headers naming a delivery, in the order they are looked at; a redelivery repeats the sender's id. */
export const DELIVERY_HEADERS = [
  'x-github-delivery',
  'x-gitlab-event-uuid',
  'x-gitea-delivery',
  'x-request-id',
] as const;

const plainDeliveryId = /^[\x21-\x7e]{1,200}$/;

/**
 * The request's delivery id: the first delivery header present and not blank. An id that is long or has
 * characters outside printable ASCII is kept as its SHA-256 (it is stored and logged, and must stay bounded).
 */
export function deliveryId(request: WebhookRequest): string | undefined {
  for (const name of DELIVERY_HEADERS) {
    const value = request.header(name)?.trim();
    if (!value) continue;
    return plainDeliveryId.test(value) ? value : `sha256:${createHash('sha256').update(value).digest('hex')}`;
  }
  return undefined;
}
