import { lookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CodedMessage } from '@signalbox/contracts';
import ipaddr from 'ipaddr.js';

/**
 * The name resolver each fetch asks once (the connection then goes to the address it checked). Tests answer for
 * names of their own through it.
 */
export const resolver = {
  lookupAll: (host: string) => lookup(host, { all: true, verbatim: true }),
};

/**
 * The server fetching a JSON document for a survey's options: http or https only, within a time limit and a size
 * cap, following a few redirects only to addresses that pass the same checks. Unless an administrator allows it
 * (SIGNALBOX_SURVEY_HTTP_ALLOW_PRIVATE), only public addresses are fetched: the host's address is checked, and
 * the connection is made to that very address (no second DNS answer can switch it to an internal one).
 */
export const HTTP_TIMEOUT_MS = 5_000;
export const HTTP_MAX_BYTES = 1024 * 1024;
export const HTTP_MAX_REDIRECTS = 3;

/** Which internal addresses may be fetched: none, all, or these addresses and CIDR ranges. */
export type AllowPrivate = boolean | string[];

export type Fetched = { json: unknown } | { error: CodedMessage };

type Target = { address: string; family: 4 | 6 };

/** True when `address` is an internal one (anything but a public unicast address), unless `allow` lets it be. */
export function refusedAddress(address: string, allow: AllowPrivate): boolean {
  if (!ipaddr.isValid(address)) return true;
  const parsed = ipaddr.process(address);
  if (parsed.range() === 'unicast') return false;
  if (allow === true) return false;
  if (allow === false) return true;
  return !allow.some((entry) => {
    try {
      const [range, bits] = entry.includes('/')
        ? ipaddr.parseCIDR(entry)
        : [ipaddr.process(entry), entry.includes(':') ? 128 : 32];
      const candidate = range.kind() === parsed.kind() ? parsed : null;
      return candidate ? candidate.match(range, bits) : false;
    } catch {
      return false;
    }
  });
}

const fail = (code: CodedMessage['code'], params?: CodedMessage['params']): { error: CodedMessage } => ({
  error: params ? { code, params } : { code },
});

/** The address to connect to for `url`'s host: an allowed one, or the coded reason there is none. */
async function target(
  url: URL,
  allow: AllowPrivate,
  signal: AbortSignal,
): Promise<Target | { error: CodedMessage }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (ipaddr.isValid(host)) {
    if (refusedAddress(host, allow)) return fail('options_http_refused_address', { host });
    return { address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 };
  }
  let answers: { address: string; family: number }[];
  try {
    // A look-up cannot be cancelled: it is given up on when the time limit passes.
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true }),
    );
    // Rejected later, once the whole fetch runs out of time, when nobody waits for it any more.
    aborted.catch(() => {});
    answers = await Promise.race([resolver.lookupAll(host), aborted]);
  } catch {
    if (signal.aborted) return fail('options_http_timeout', { limit: HTTP_TIMEOUT_MS / 1000 });
    return fail('options_http_unreachable', { host });
  }
  const usable = answers.filter((a) => !refusedAddress(a.address, allow));
  const first = usable[0];
  if (!first) return fail('options_http_refused_address', { host });
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A URL the fetcher may ask: http or https, without credentials in it. */
function checkedUrl(text: string, base?: URL): URL | null {
  let url: URL;
  try {
    url = base ? new URL(text, base) : new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password) return null;
  return url;
}

type Answer = { redirect: string } | Fetched;

/** One GET of `url`, connected to `to` only. */
function getOnce(
  url: URL,
  to: Target,
  allow: AllowPrivate,
  authorization: string | null,
  signal: AbortSignal,
): Promise<Answer> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // The connection goes to the checked address whatever DNS would answer now.
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) callback(null, [{ address: to.address, family: to.family }]);
    else callback(null, to.address, to.family);
  };
  return new Promise<Answer>((resolve) => {
    let settled = false;
    const done = (answer: Answer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    const failed = () =>
      done(
        signal.aborted
          ? fail('options_http_timeout', { limit: HTTP_TIMEOUT_MS / 1000 })
          : fail('options_http_unreachable', { host }),
      );
    const request = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: 'GET',
        agent: false,
        lookup: pinned,
        signal,
        headers: {
          accept: 'application/json',
          'user-agent': 'Signalbox survey options',
          ...(authorization ? { authorization } : {}),
        },
      },
      (response: IncomingMessage) => {
        // The socket is connected to the pinned address; checked again all the same.
        const remote = response.socket?.remoteAddress;
        if (!remote || refusedAddress(remote, allow)) {
          done(fail('options_http_refused_address', { host }));
          response.destroy();
          return;
        }
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          done({ redirect: response.headers.location });
          response.destroy();
          return;
        }
        if (status < 200 || status >= 300) {
          done(fail('options_http_status', { status }));
          response.destroy();
          return;
        }
        const tooLarge = fail('options_http_too_large', { max: '1 MiB' });
        if (Number(response.headers['content-length'] ?? 0) > HTTP_MAX_BYTES) {
          done(tooLarge);
          response.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > HTTP_MAX_BYTES) {
            done(tooLarge);
            response.destroy();
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', failed);
        response.on('aborted', failed);
        response.on('end', () => {
          try {
            done({ json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch {
            done(fail('options_http_not_json'));
          }
        });
      },
    );
    request.on('error', failed);
    request.end();
  });
}

/**
 * GETs `text` as JSON, following at most 3 redirects to URLs that pass the same checks, all within 5 seconds and
 * 1 MiB. Credentials (`authorization`) go only to the first URL's origin. Every failure is a coded error.
 */
export async function fetchJson(
  text: string,
  opts: { allow: AllowPrivate; authorization: string | null },
): Promise<Fetched> {
  const first = checkedUrl(text);
  if (!first) return fail('options_http_bad_url');
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), HTTP_TIMEOUT_MS);
  try {
    let url = first;
    for (let hop = 0; ; hop++) {
      const to = await target(url, opts.allow, controller.signal);
      if ('error' in to) return to;
      if (controller.signal.aborted) return fail('options_http_timeout', { limit: HTTP_TIMEOUT_MS / 1000 });
      const sameOrigin = url.origin === first.origin;
      const answer = await getOnce(
        url,
        to,
        opts.allow,
        sameOrigin ? opts.authorization : null,
        controller.signal,
      );
      if (!('redirect' in answer)) return answer;
      if (hop >= HTTP_MAX_REDIRECTS) return fail('options_http_redirects', { max: HTTP_MAX_REDIRECTS });
      const next = checkedUrl(answer.redirect, url);
      if (!next) return fail('options_http_bad_url');
      url = next;
    }
  } finally {
    clearTimeout(timer);
  }
}
