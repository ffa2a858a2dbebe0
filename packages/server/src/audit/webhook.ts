import { createHmac } from 'node:crypto';

/** Parses `SIGNALBOX_AUDIT_WEBHOOK_URL`; throws an Error saying what is wrong (never echoing the value). */
export function parseWebhookUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error('must be an http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('must be an http:// or https:// URL');
  return url;
}

/** The header a signed batch carries: `sha256=<hex>`, the HMAC-SHA256 of the exact body with the secret. */
export const AUDIT_SIGNATURE_HEADER = 'x-signalbox-signature';
export const auditSignature = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * POSTs batches of JSON lines (`application/x-ndjson`, one event per line) to the audit webhook. A batch counts
 * as delivered on a 2xx answer; anything else (another status, a network failure, no answer within the timeout,
 * a redirect) throws, and the caller sends the same batch again later.
 */
export function webhookSender(url: URL, secret: string, timeoutMs: number) {
  const closing = new AbortController();
  return {
    async send(lines: string[]) {
      const body = `${lines.join('\n')}\n`;
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-ndjson',
          ...(secret ? { [AUDIT_SIGNATURE_HEADER]: auditSignature(secret, body) } : {}),
        },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), closing.signal]),
        redirect: 'error',
      });
      // Read the answer so the connection is released; its content does not matter.
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status > 299)
        throw Object.assign(new Error(`HTTP ${res.status}`), { code: `HTTP ${res.status}` });
    },
    /** Ends a request in flight (at shutdown, once the time to deliver has run out). */
    close() {
      closing.abort();
    },
  };
}
