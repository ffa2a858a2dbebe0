import { describe, expect, it } from 'vitest';
import { useSharedServerAsAdmin } from './support/shared';

const suite = useSharedServerAsAdmin();

describe('API reference', () => {
  it('renders /api/docs from this server alone', async () => {
    const page = await suite.pageAs(suite.admin);
    const origin = new URL(suite.server.url).origin;
    // Every request the page makes: the reference must work offline, with no CDN, font or validator service.
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));

    await page.goto('/api/docs');
    await page.getByRole('heading', { name: /Signalbox API/ }).waitFor();
    // The groups open collapsed; every group is listed.
    const groups = page.locator('h3.opblock-tag');
    await groups.filter({ hasText: /^project tasks$/ }).waitFor();
    expect(await groups.count()).toBeGreaterThan(25);
    await groups.filter({ hasText: /^projects$/ }).click();
    await page.getByText('/api/projects', { exact: true }).first().waitFor();
    await page.waitForLoadState('networkidle');

    expect(requested.length).toBeGreaterThan(0);
    // Inline images (data:, blob:) are not requests to anyone.
    const elsewhere = requested.filter((url) => !/^(data|blob):/.test(url) && new URL(url).origin !== origin);
    expect(elsewhere).toEqual([]);
    expect(requested).toContain(`${origin}/api/docs/json`);
    // Signalbox's, not Fastify's or Swagger's: the title and the logo.
    expect(await page.title()).toBe('Signalbox API reference');
    expect(await page.locator('.topbar img').getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await page.evaluate(() => document.documentElement.classList.contains('signalbox-dark'))).toBe(
      false,
    );
    await page.context().close();
  });

  it('is dark when the console is, or when the system prefers dark and the console follows it', async () => {
    for (const [scheme, stored, dark, drawn] of [
      ['light', 'dark', true, true],
      ['dark', null, true, false],
      ['dark', 'light', false, false],
    ] as const) {
      const page = await suite.pageAs(suite.admin, { colorScheme: scheme });
      if (stored) await page.addInitScript((mode) => localStorage.setItem('darkMode', mode), stored);
      // The theme script alone decides the scheme: past the first case, Swagger UI's own code (a few MB that draw
      // some 140 operations) is not loaded, and the page is only the theme's.
      if (!drawn)
        await page.route(/\/static\/swagger-ui-(bundle|standalone-preset)\.js$/, (route) => route.abort());
      // The theme script runs when the page has loaded, before Swagger UI has drawn the operations.
      await page.goto('/api/docs', { waitUntil: 'load' });
      const isDark = () => page.evaluate(() => document.documentElement.classList.contains('signalbox-dark'));
      await expect.poll(isDark, { message: `${scheme} system, console ${stored}` }).toBe(dark);
      await page.context().close();
    }
  });
});
