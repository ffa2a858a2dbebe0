import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness, type Harness } from '../../test/support/harness';
import { ConfigError, loadConfig } from '../config';
import { chosenLogFormat } from './logging';

/**
 * Every request has an id: in each of its log lines (`reqId`), in the X-Request-Id response header and in every
 * error body (`request_id`), so the id a user reports finds the request's log lines. A caller's X-Request-Id (a
 * proxy's) is kept only when it is a short safe token.
 */

type LogLine = { reqId?: string; msg?: string; req?: { url?: string } };

describe.each(testDialects())('request ids on $name', (dialect) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(dialect);
  });
  afterAll(async () => {
    await h?.close();
  });

  const linesOf = (reqId: string): LogLine[] =>
    h.logLines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.reqId === reqId);

  it('names the request in its error body, its X-Request-Id header and its log lines', async () => {
    const res = await h.anonymous().get('/api/projects');
    expect(res.statusCode).toBe(401);
    const id = res.headers['x-request-id'];
    expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    expect(res.json()).toEqual({ error: expect.any(String), code: 'not_signed_in', request_id: id });
    const lines = linesOf(String(id));
    expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
  });

  it('gives each request an id of its own', async () => {
    const ids = new Set<unknown>();
    for (let i = 0; i < 3; i++) ids.add((await h.anonymous().get('/api/ping')).headers['x-request-id']);
    expect(ids.size).toBe(3);
  });

  it("keeps a caller's safe X-Request-Id, in the 404 body and the log", async () => {
    const res = await h.anonymous().request('POST', '/no-such-page', undefined, {
      'x-request-id': 'proxy-7f3a.b_9',
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toBe('proxy-7f3a.b_9');
    expect(res.json()).toMatchObject({ request_id: 'proxy-7f3a.b_9' });
    expect(linesOf('proxy-7f3a.b_9').length).toBeGreaterThan(0);
  });

  it('replaces a hostile X-Request-Id (too long, a newline, spaces, other characters)', async () => {
    for (const hostile of ['a'.repeat(65), 'abc\ndef', 'abc def', 'a"}{"admin":true', 'ü']) {
      const res = await h.anonymous().request('GET', '/api/projects', undefined, { 'x-request-id': hostile });
      const id = res.headers['x-request-id'];
      expect(id).not.toBe(hostile);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
      expect(res.json()).toMatchObject({ request_id: id });
      expect(h.logLines.join('\n')).not.toContain(hostile);
    }
    const longest = 'b'.repeat(64);
    const kept = await h.anonymous().request('GET', '/api/ping', undefined, { 'x-request-id': longest });
    expect(kept.headers['x-request-id']).toBe(longest);
  });

  it('carries the id in the body of a URL Fastify cannot route', async () => {
    const res = await h.anonymous().request('GET', '/api/project/%E0%A4%A', undefined, {
      'x-request-id': 'bad-url-1',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['x-request-id']).toBe('bad-url-1');
    expect(res.json()).toEqual({
      error: 'Request URL is not valid (malformed percent-encoding)',
      code: 'url_malformed',
      request_id: 'bad-url-1',
    });
  });

  it('logs no query string, and only the route pattern of an integration alias', async () => {
    await h
      .anonymous()
      .request('GET', '/api/auth/oidc/none/redirect?code=oidc-code-secret&state=s', undefined, {
        'x-request-id': 'oidc-callback',
      });
    await h.anonymous().request(
      'POST',
      '/api/integrations/alias-secret-value?token=query-secret',
      {},
      {
        'x-request-id': 'webhook-call',
      },
    );
    const logged = h.logLines.join('\n');
    for (const secret of ['oidc-code-secret', 'alias-secret-value', 'query-secret'])
      expect(logged).not.toContain(secret);
    const urls = [...linesOf('oidc-callback'), ...linesOf('webhook-call')].flatMap(
      (line) => line.req?.url ?? [],
    );
    expect(urls).toEqual(['/api/auth/oidc/none/redirect', '/api/integrations/:alias']);
  });
});

describe('SIGNALBOX_LOG_FORMAT', () => {
  it('auto is pretty on a terminal and JSON anywhere else; json and pretty are kept', () => {
    expect(chosenLogFormat('auto', true)).toBe('pretty');
    expect(chosenLogFormat('auto', false)).toBe('json');
    expect(chosenLogFormat('json', true)).toBe('json');
    expect(chosenLogFormat('pretty', false)).toBe('pretty');
  });

  it('refuses any other value, naming the variable', () => {
    expect(loadConfig({ SIGNALBOX_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(() => loadConfig({ SIGNALBOX_LOG_FORMAT: 'text' })).toThrow(
      new ConfigError('SIGNALBOX_LOG_FORMAT: must be auto, json or pretty'),
    );
  });
});
