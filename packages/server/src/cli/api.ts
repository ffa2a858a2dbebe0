import { version } from '../version';
import type { Credentials } from './credentials';
import { ClientError } from './errors';

/** How long one request may take before the command gives up on the server. */
const REQUEST_TIMEOUT_MS = 30_000;

/** An answer of the API: its status, its JSON body and the headers the client reads (the next page's link). */
export type Answer<T> = { status: number; body: T; link: string | null };

/** The error body every refused request carries (`{error, code, fields?}`). */
type ErrorBody = { error?: unknown; code?: unknown; fields?: unknown };

/** Why a request never got an answer, in words (from the network error's code). */
function unreachable(url: string, err: unknown): ClientError {
  if ((err as Error).name === 'TimeoutError')
    return new ClientError(`the server at ${url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
  };
  const reason = (cause?.code && reasons[cause.code]) ?? cause?.message ?? (err as Error).message;
  return new ClientError(`cannot reach the server at ${url} (${reason})`);
}

/** The one line a refused request is reported as: the server's own words, and each field's. */
function refusal(status: number, body: ErrorBody | null, credentials: Credentials): ClientError {
  if (status === 401) {
    const how =
      credentials.from === 'environment'
        ? 'check SIGNALBOX_TOKEN'
        : `run signalbox login --url ${credentials.url} with a valid token`;
    return new ClientError(`the server at ${credentials.url} refused the API token (401): ${how}`);
  }
  const said = typeof body?.error === 'string' && body.error ? body.error : `HTTP ${status}`;
  // A refused field is named as the command line names it (survey.count, answered by --var count=…: count).
  const fields =
    body?.fields && typeof body.fields === 'object'
      ? Object.entries(body.fields as Record<string, unknown>).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        )
      : [];
  const named = fields.map(([field, text]) => `${field.replace(/^survey\./, '')}: ${text}`).join('; ');
  const told =
    fields.length === 0 ? said : fields.some(([, text]) => text === said) ? named : `${said} (${named})`;
  const prefix = status >= 500 ? `the server failed (${status}): ` : '';
  const code = typeof body?.code === 'string' ? body.code : undefined;
  return new ClientError(`${prefix}${told}`.replace(/\s*\n\s*/g, ' '), 1, code);
}

/**
 * The REST API of one server, called with a bearer token. Every failure becomes a ClientError of one line: the
 * token refused, the server unreachable, a refusal in the server's words. Redirects are not followed (the token is
 * sent to the configured URL and nowhere else).
 */
export class Api {
  constructor(readonly credentials: Credentials) {}

  get url() {
    return this.credentials.url;
  }

  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    { absentIsNull = false } = {},
  ): Promise<Answer<T>> {
    let response: Response;
    try {
      response = await fetch(`${this.url}/api${path}`, {
        method,
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        headers: {
          authorization: `Bearer ${this.credentials.token}`,
          accept: 'application/json',
          'user-agent': `signalbox-cli/${version}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw unreachable(this.url, err);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const to = response.headers.get('location');
      throw new ClientError(
        `the server at ${this.url} redirected to ${to ?? 'another address'}; sign in with the URL it redirects to`,
      );
    }
    const text = await response.text().catch((err: unknown) => {
      throw unreachable(this.url, err);
    });
    const json = response.headers.get('content-type')?.includes('application/json')
      ? parseJson(text)
      : undefined;
    if (response.status === 404 && absentIsNull) return { status: 404, body: null as T, link: null };
    if (!response.ok)
      throw refusal(response.status, (json as ErrorBody | undefined) ?? null, this.credentials);
    if (response.status === 204) return { status: 204, body: undefined as T, link: null };
    if (json === undefined)
      throw new ClientError(
        `the server at ${this.url} did not answer as Signalbox does (HTTP ${response.status}, ${
          response.headers.get('content-type') ?? 'no content type'
        }); is it the right URL?`,
      );
    return { status: response.status, body: json as T, link: response.headers.get('link') };
  }

  async get<T>(path: string): Promise<T> {
    return (await this.request<T>('GET', path)).body;
  }

  /** GET, with null for 404 (what this token cannot see is absent too). */
  async find<T>(path: string): Promise<T | null> {
    return (await this.request<T | null>('GET', path, undefined, { absentIsNull: true })).body;
  }

  async post<T>(path: string, body: unknown = {}): Promise<T> {
    return (await this.request<T>('POST', path, body)).body;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
