import { describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness } from '../../test/support/harness';
import { ConfigError, loadConfig } from '../config';

/**
 * SIGNALBOX_TRUST_PROXY decides which X-Forwarded-For entries are believed. Each proxy appends the address it
 * saw, so only entries added by trusted proxies count: a client that sends its own X-Forwarded-For cannot choose
 * the address its sign-in (and its per-address limit) is recorded under.
 */

const trustProxy = (value?: string) =>
  loadConfig(value === undefined ? {} : { SIGNALBOX_TRUST_PROXY: value }).trustProxy;

describe('SIGNALBOX_TRUST_PROXY', () => {
  it('reads false, true (one hop), a hop count or proxy addresses and ranges', () => {
    expect(trustProxy()).toBe(false);
    expect(trustProxy('false')).toBe(false);
    expect(trustProxy('0')).toBe(false);
    expect(trustProxy('true')).toBe(1);
    expect(trustProxy('TRUE')).toBe(1);
    expect(trustProxy('1')).toBe(1);
    expect(trustProxy('3')).toBe(3);
    expect(trustProxy('10.0.0.7')).toEqual(['10.0.0.7']);
    expect(trustProxy(' 10.0.0.0/8, fd00::/8 ,::1, loopback')).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '::1',
      'loopback',
    ]);
  });

  it('refuses anything else, naming the variable and the entry', () => {
    for (const bad of [
      'maybe',
      '10.0.0.0/33',
      '::1/129',
      '10.0.0.1,',
      '1.2.3',
      '10.0.0.0/8/8',
      '101',
      'example.com',
    ])
      expect(() => trustProxy(bad), bad).toThrow(ConfigError);
    expect(() => trustProxy('10.0.0.1, proxy.local')).toThrow(
      /^SIGNALBOX_TRUST_PROXY: must be true, false, a number of proxy hops.*"proxy\.local"/,
    );
  });

  // The request reaches the server from 127.0.0.1 (the nearest proxy), which saw the client as 203.0.113.7; the
  // client itself sent "X-Forwarded-For: 6.6.6.6" to pose as another address.
  const spoofed = { 'x-forwarded-for': '6.6.6.6, 203.0.113.7' };
  it.each([
    [undefined, '127.0.0.1'],
    ['false', '127.0.0.1'],
    ['true', '203.0.113.7'],
    ['1', '203.0.113.7'],
    ['2', '6.6.6.6'],
    ['127.0.0.1', '203.0.113.7'],
    ['loopback', '203.0.113.7'],
    ['127.0.0.0/8, 203.0.113.0/24', '6.6.6.6'],
    ['10.0.0.1', '127.0.0.1'],
  ])('with %s records a sign-in from a spoofed X-Forwarded-For as %s', async (setting, expected) => {
    const h = await createHarness(testDialects()[0]!, { trustProxy: trustProxy(setting) });
    try {
      const user = await h.userClient();
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '127.0.0.1',
        headers: spoofed,
        payload: { auth: user.username, password: user.password },
      });
      expect(res.statusCode, res.body).toBe(204);
      const session = await h.deps.db
        .selectFrom('session')
        .select('ip')
        .where('user_id', '=', user.userId)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(session.ip).toBe(expected);
    } finally {
      await h.close();
    }
  });
});
