import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, inject } from 'vitest';
import { type Api, login } from './api';
import { launch, newContext, useSession } from './browser';
import { ADMIN } from './server';
import type { SharedServer } from './shared-server';

/** The server the e2e project's global setup started for all test files (see shared-server.ts). */
export const sharedServer = (): SharedServer => inject('sharedServer');

/**
 * A test file's setup on the shared server: before its tests, a browser and the admin's API client; after
 * them, the browser closes. `pageAs(api)` opens a page in a fresh context signed in with that client's session.
 */
export function useSharedServerAsAdmin() {
  let server: SharedServer | undefined;
  let browser: Browser | undefined;
  let admin: Api | undefined;
  beforeAll(async () => {
    server = sharedServer();
    browser = await launch();
    admin = await login(server.url, ADMIN.login, ADMIN.password);
  });
  afterAll(async () => {
    await browser?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('used before beforeAll ran');
    return value;
  };
  return {
    get server() {
      return ready(server);
    },
    get admin() {
      return ready(admin);
    },
    async pageAs(api: Api, options: Parameters<typeof newContext>[2] = {}): Promise<Page> {
      const url = ready(server).url;
      const context = await newContext(ready(browser), url, options);
      await useSession(context, url, api.cookie);
      return context.newPage();
    },
  };
}
