import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from './support/api';
import { launch, newContext, PHONE, shot, useSession, WAIT_MS } from './support/browser';
import { ADMIN, startServer, type TestServer } from './support/server';

/**
 * A loopback TCP proxy in front of the real Redis that the test can cut (every connection dropped, new ones
 * refused) and restore on the same port, as a Redis restart or a network cut does.
 */
async function redisProxy(target = { host: '127.0.0.1', port: 6379 }) {
  const open = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target);
        open.add(client).add(upstream);
        for (const s of [client, upstream]) {
          s.on('error', () => {});
          s.on('close', () => {
            open.delete(s);
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await listen();
  return {
    url: () => `redis://127.0.0.1:${port}`,
    async cut() {
      await new Promise<void>((resolve) => {
        server!.close(() => resolve());
        for (const s of open) s.destroy();
      });
    },
    restore: listen,
    close: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}

describe('a server that loses Redis', () => {
  let proxy: Awaited<ReturnType<typeof redisProxy>>;
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    proxy = await redisProxy();
    server = await startServer({
      SIGNALBOX_REDIS_URL: proxy.url(),
      SIGNALBOX_REDIS_PREFIX: `e2e-${process.pid}`,
    });
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await proxy?.close().catch(() => {});
  });

  it('tells its viewers that other servers’ tasks are not updated, and clears when Redis is back', async () => {
    const admin = await login(server.url, ADMIN.login, ADMIN.password);
    const project = await admin.post<{ id: number }>('/projects', { name: 'Cluster view' });
    for (const [scheme, viewport, size] of [
      ['light', undefined, '1280'],
      ['dark', PHONE, '390'],
    ] as const) {
      const context = await newContext(browser, server.url, {
        colorScheme: scheme,
        ...(viewport ? { viewport } : {}),
      });
      await useSession(context, server.url, admin.cookie);
      const page = await context.newPage();
      await page.goto(`/project/${project.id}/history`);
      await page.getByText('Cluster view').first().waitFor();
      const banner = page.getByRole('status').filter({ hasText: 'Updates from other servers are paused' });
      expect(await banner.count()).toBe(0);

      await proxy.cut();
      await banner.waitFor({ timeout: 20_000 });
      expect(await banner.textContent()).toContain('lost its connection to Redis');
      // The page itself still works: it is only the other servers' events that are missing.
      expect(
        await page.getByRole('status').filter({ hasText: 'Live updates are disconnected' }).count(),
      ).toBe(0);
      await shot(page, `redis-outage-${scheme}-${size}`);

      await proxy.restore();
      await banner.waitFor({ state: 'detached', timeout: WAIT_MS });
      await context.close();
    }
  });
});
