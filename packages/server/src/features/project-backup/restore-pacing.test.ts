import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';

const many = <T>(count: number, item: (i: number) => T) => Array.from({ length: count }, (_, i) => item(i));

/** A backup of `perKind` keys, repositories, inventories and views: many rows, each a quick insert. */
const bigBackup = (perKind: number) => ({
  meta: { name: 'Big restore', alert: false, alert_chat: null, max_parallel_tasks: 0, type: '' },
  templates: [],
  repositories: many(perKind, (i) => ({
    name: `Repo ${i}`,
    git_url: `https://git.example.test/r${i}.git`,
    git_branch: 'main',
    ssh_key: 'None',
  })),
  keys: [
    { name: 'None', type: 'none', owner: '' },
    ...many(perKind - 1, (i) => ({ name: `Key ${i}`, type: 'none', owner: '' })),
  ],
  views: many(perKind, (i) => ({ title: `View ${i}`, position: i })),
  inventories: many(perKind, (i) => ({
    name: `Inventory ${i}`,
    type: 'static',
    inventory: `host${i}\n`,
    ssh_key: 'None',
    become_key: null,
  })),
  environments: [{ name: 'Empty', json: '{}', env: '{}' }],
  integrations: [],
  integration_aliases: [],
  schedules: [],
});

describe.each(testDialects())('a big restore on $name', (dialect) => {
  let h: Harness;
  let creator: Client;

  beforeAll(async () => {
    h = await createHarness(dialect);
    creator = await h.userClient({ can_create_project: true });
  });
  afterAll(async () => h?.close());

  it('lets other requests be answered while it writes, and still writes the whole project', async () => {
    // SQLite's statements run on the server's own thread: there a big backup would hold it. The other databases
    // answer over the network, and a smaller backup keeps the test short there.
    const perKind = dialect.name === 'sqlite' ? 5000 : 300;
    let pending = true;
    const restore = creator.post('/api/projects/restore', bigBackup(perKind)).finally(() => {
      pending = false;
    });
    // Probes one after another for as long as the restore runs, each sent from a turn of the event loop of its
    // own (as a request from the network arrives): each is answered between the restore's writes.
    let answeredWhilePending = 0;
    while (pending) {
      await new Promise((resolve) => setImmediate(resolve));
      const live = await h.app.inject({ method: 'GET', url: '/api/health/live' });
      expect(live.statusCode).toBe(200);
      if (pending) answeredWhilePending += 1;
    }
    const res = await restore;
    expect(res.statusCode, res.body).toBe(200);
    expect(answeredWhilePending).toBeGreaterThanOrEqual(10);
    for (const table of ['access_key', 'repository', 'inventory', 'view'] as const) {
      const rows = await h.deps.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('project_id', '=', res.json().id)
        .executeTakeFirstOrThrow();
      expect(Number(rows.n), table).toBe(perKind);
    }
  }, 120_000);
});
