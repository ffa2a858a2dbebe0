import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launch, PHONE, shot, takingScreenshots } from './support/browser';
import { sharedServer } from './support/shared';
import type { SharedServer } from './support/shared-server';
import { contextAs, expectSnackbar, seedTeam, type Team } from './support/team';

let server: SharedServer;
let browser: Browser;
let team: Team;
let token: string;

/** The secret a state's sensitive attribute holds: the console never shows it. */
const STATE_SECRET = 'e2e-st4te-s3cret';

const stateDoc = (serial: number, resources: unknown[]) =>
  JSON.stringify({
    version: 4,
    terraform_version: '1.9.5',
    serial,
    lineage: 'e2e-lineage',
    outputs: {},
    resources,
  });
const resource = (
  type: string,
  name: string,
  attributes: Record<string, unknown>,
  sensitive: string[] = [],
) => ({
  mode: 'managed',
  type,
  name,
  provider: 'provider["registry.terraform.io/hashicorp/aws"]',
  instances: [
    {
      schema_version: 0,
      attributes,
      sensitive_attributes: sensitive.map((value) => [{ type: 'get_attr', value }]),
    },
  ],
});

/** Terraform's http backend, called as Terraform calls it from a laptop: basic auth with an API token. */
async function backend(method: string, name: string, body?: string, query = '') {
  const res = await fetch(`${server.url}/api/project/${team.projectId}/terraform/states/${name}${query}`, {
    method,
    headers: {
      authorization: `Basic ${Buffer.from(`laptop:${token}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body,
  });
  if (res.status !== 200) throw new Error(`${method} ${name}: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  server = sharedServer();
  browser = await launch();
  team = await seedTeam(server.url, 'States project');
  token = (await team.admin.post<{ token: string }>('/user/tokens', { name: 'laptop' })).token;
  // network: three versions (a resource added, one changed with a sensitive value, one removed).
  const db = (password: string, size: string) =>
    resource('aws_db_instance', 'main', { id: 'db-1', password, instance_class: size }, ['password']);
  await backend(
    'POST',
    'network',
    stateDoc(1, [resource('aws_vpc', 'main', { id: 'vpc-1', cidr_block: '10.0.0.0/16' })]),
  );
  await backend(
    'POST',
    'network',
    stateDoc(2, [
      resource('aws_vpc', 'main', { id: 'vpc-1', cidr_block: '10.0.0.0/16' }),
      db(`${STATE_SECRET}-1`, 'db.t3.small'),
    ]),
  );
  await backend(
    'POST',
    'network',
    stateDoc(3, [
      resource('aws_vpc', 'main', { id: 'vpc-1', cidr_block: '10.1.0.0/16', tags: { env: 'prod' } }),
      db(STATE_SECRET, 'db.t3.medium'),
      resource('aws_subnet', 'a', { id: 'subnet-a' }),
    ]),
  );
  // app: one version, locked by a run on someone's laptop.
  await backend('POST', 'app', stateDoc(1, [resource('aws_instance', 'web', { id: 'i-1' })]));
  await backend(
    'LOCK',
    'app',
    JSON.stringify({
      ID: 'b7e9c0de-1f2a-4c3b-9d8e-0a1b2c3d4e5f',
      Operation: 'OperationTypeApply',
      Info: '',
      Who: 'alice@laptop',
      Version: '1.9.5',
      Created: '2026-11-29T09:30:00Z',
      Path: '',
    }),
  );
});
afterAll(async () => {
  await browser?.close();
});

const states = (projectId: number) => `/project/${projectId}/terraform_states`;

/**
 * The page at desktop and phone width, without overflow at 390 px; under `npm run screenshots` in light and dark,
 * each after `act` (which opens what the screenshot shows).
 */
async function shots(path: string, name: string, act: (page: Page) => Promise<void> = async () => {}) {
  const schemes = takingScreenshots ? (['light', 'dark'] as const) : (['light'] as const);
  for (const scheme of schemes) {
    for (const [size, viewport] of [
      ['1280', DESKTOP],
      ['390', PHONE],
    ] as const) {
      const { context, page } = await contextAs(browser, server.url, team.manager, {
        viewport,
        colorScheme: scheme,
      });
      await page.addInitScript(
        (dark) => localStorage.setItem('darkMode', dark),
        scheme === 'dark' ? 'true' : 'false',
      );
      await page.goto(path);
      await page.waitForLoadState('networkidle');
      await act(page);
      await shot(page, `${name}-${scheme}-${size}`);
      if (size === '390') {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${name} overflows at 390 px`).toBeLessThanOrEqual(1);
      }
      await context.close();
    }
  }
}

describe('the Terraform states page', () => {
  it('lists each state with its lock, size and versions, in light and dark, on desktop and phone', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`/project/${team.projectId}/history`);
    await page.getByRole('link', { name: 'Terraform states' }).click();
    await page.waitForURL(/\/terraform_states$/);
    const app = page.locator('tr[data-state="app"]');
    await app.getByText('Locked by alice@laptop').waitFor();
    const network = page.locator('tr[data-state="network"]');
    await network.getByText('Unlocked').waitFor();
    expect(await network.locator('td').last().textContent()).toBe('3');
    await context.close();
    await shots(states(team.projectId), 'terraform-states');
    await shots(`${states(team.projectId)}?state=app`, 'terraform-state-lock');
  });

  it('shows what changed between versions, sensitive values hidden', async () => {
    const openDiff = async (page: Page) => {
      await page.locator('tr[data-version]').first().getByRole('button', { name: 'Changes' }).click();
      await page.getByRole('region', { name: 'Changes from serial 2 to serial 3' }).waitFor();
    };
    const { context, page } = await contextAs(browser, server.url, team.runner);
    await page.goto(`${states(team.projectId)}?state=network`);
    await openDiff(page);
    const diff = page.getByRole('region', { name: 'Changes from serial 2 to serial 3' });
    await diff.getByText('aws_subnet.a', { exact: true }).waitFor();
    const db = diff.locator('[data-diff-address="aws_db_instance.main"]');
    await db.getByText('password: sensitive value changed (hidden)').waitFor();
    await db.getByText('instance_class: "db.t3.small" → "db.t3.medium"').waitFor();
    await diff.locator('[data-diff-address="aws_vpc.main"]').getByText('tags.env: ∅ → "prod"').waitFor();
    expect(await page.content()).not.toContain(STATE_SECRET);
    // A task runner neither rolls back nor unlocks.
    expect(await page.getByRole('button', { name: 'Roll back' }).count()).toBe(0);
    await context.close();
    await shots(`${states(team.projectId)}?state=network`, 'terraform-state-diff', openDiff);
  });

  it('lets a manager force-unlock a state and roll one back, both in the activity log', async () => {
    const { context, page } = await contextAs(browser, server.url, team.manager);
    await page.goto(`${states(team.projectId)}?state=app`);
    await page.getByText('Locked by alice@laptop since').waitFor();
    await page.getByText('OperationTypeApply, lock ID b7e9c0de-1f2a-4c3b-9d8e-0a1b2c3d4e5f').waitFor();
    await page.getByRole('button', { name: 'Force unlock' }).click();
    const confirm = page.getByRole('dialog');
    await confirm
      .getByText('Release the lock b7e9c0de-1f2a-4c3b-9d8e-0a1b2c3d4e5f held by alice@laptop?', {
        exact: false,
      })
      .waitFor();
    await confirm.getByRole('button', { name: 'Force unlock' }).click();
    await expectSnackbar(page, 'The lock of app was released');
    await page.getByText('Not locked').waitFor();

    await page.getByRole('button', { name: 'All states' }).click();
    await page.getByRole('button', { name: 'network' }).click();
    const oldest = page.locator('tr[data-version]').last();
    await oldest.getByRole('button', { name: 'Roll back' }).click();
    await page
      .getByRole('dialog')
      .getByText('Make the state of serial 1 the current state of network?', { exact: false })
      .waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await expectSnackbar(page, 'network rolled back to the state of serial 1');
    const newest = page.locator('tr[data-version]').first();
    await newest.getByText('Current').waitFor();
    await newest.getByText(/^rollback of version \d+$/).waitFor();
    expect((await newest.locator('td').first().textContent())?.startsWith('4')).toBe(true);

    const detail = await team.admin.get<{ state: { serial: number; lock: unknown } }>(
      `/project/${team.projectId}/terraform/states/network/versions`,
    );
    expect(detail.state.serial).toBe(4);
    const events = await team.admin.get<{ kind: string }[]>(
      `/project/${team.projectId}/events?object_type=terraform_state`,
    );
    expect(events.map((e) => e.kind)).toEqual([
      'terraform_state.rolled_back',
      'terraform_state.force_unlocked',
    ]);
    await page.goto(`/project/${team.projectId}/activity`);
    await page.getByText('Terraform state network rolled back to version', { exact: false }).waitFor();
    await context.close();
  });
});
