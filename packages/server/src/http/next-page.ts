import type { FastifyReply } from 'fastify';

/** Characters a link target keeps as they are; any other is percent-encoded (a `>` would end the target). */
const UNSAFE = /[^\w\-.~!$&'()*+,;=:@/?%]/g;

/** The decoded name of one `name=value` part of a query string. */
function nameOf(part: string): string {
  const eq = part.indexOf('=');
  const raw = (eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * Names the next page of a keyset-paged list in a `Link: <…>; rel="next"` header: the request's own path and
 * query, its `offset` dropped and its `before` and `limit` set (in place when given, else added, in that order).
 * Built from the request's target as text: parsing it into a URL object took 6 % of a busy list's CPU.
 */
export function linkNextPage(url: string, reply: FastifyReply, before: number, limit: number) {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const parts: string[] = [];
  const set = { before: `before=${before}`, limit: `limit=${limit}` };
  const placed = { before: false, limit: false };
  for (const part of q < 0 ? [] : url.slice(q + 1).split('&')) {
    if (part === '') continue;
    const name = nameOf(part);
    if (name === 'offset') continue;
    if (name === 'before' || name === 'limit') {
      if (!placed[name]) parts.push(set[name]);
      placed[name] = true;
      continue;
    }
    parts.push(part);
  }
  if (!placed.before) parts.push(set.before);
  if (!placed.limit) parts.push(set.limit);
  reply.header('link', `<${`${path}?${parts.join('&')}`.replace(UNSAFE, encodeURIComponent)}>; rel="next"`);
}
