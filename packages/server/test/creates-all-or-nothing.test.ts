import { errorTexts } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from './support/dialects';
import { answeredError, type Client, createHarness, type Harness } from './support/harness';
import { rejectInserts } from './support/reject-inserts';
import { ansibleBody, templateFixtures } from './support/template-fixtures';

// A create that writes several rows (the resource, its default rows, its audit event) writes them in one
// transaction: when the database refuses the audit event, the client gets a 500 and none of the rows stay.

const tables = [
  'project',
  'project_user',
  'access_key',
  'repository',
  'environment',
  'inventory',
  'view',
  'template',
  'schedule',
  'integration',
  'integration_alias',
  'task',
  'user',
  'runner_registration_token',
  'event',
] as const;

describe.each(testDialects())('creates on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let base: string;
  let templateId: number;
  let keyId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
    const project = await admin.post('/api/projects', { name: 'Atomic' });
    expect(project.statusCode, project.body).toBe(201);
    const projectId = project.json().id as number;
    base = `/api/project/${projectId}`;
    const fx = await templateFixtures(h, projectId);
    keyId = fx.key;
    const template = await admin.post(`${base}/templates`, ansibleBody(fx));
    expect(template.statusCode, template.body).toBe(201);
    templateId = template.json().id;
  });
  afterAll(async () => h?.close());

  /** Every row of the tables creates write, to compare before and after. */
  const rows = async () => {
    const all: Record<string, unknown> = {};
    for (const table of tables) all[table] = await h.deps.db.selectFrom(table).selectAll().execute();
    return JSON.stringify(all);
  };

  const creates: [string, () => [string, Record<string, unknown>]][] = [
    ['a project with its owner, None key and Empty environment', () => ['/api/projects', { name: 'Lost' }]],
    [
      'a user',
      () => [
        '/api/users',
        { name: 'Lost', username: 'lost', email: 'lost@example.test', password: 'lost-password-1' },
      ],
    ],
    ['an access key', () => [`${base}/keys`, { name: 'Lost key', type: 'none' }]],
    [
      'a repository',
      () => [
        `${base}/repositories`,
        {
          name: 'Lost repo',
          git_url: 'https://example.test/lost.git',
          git_branch: 'main',
          ssh_key_id: keyId,
        },
      ],
    ],
    ['an environment', () => [`${base}/environment`, { name: 'Lost env', json: '{}' }]],
    [
      'an inventory',
      () => [
        `${base}/inventory`,
        { name: 'Lost hosts', type: 'static', inventory: 'localhost', ssh_key_id: keyId },
      ],
    ],
    ['a view', () => [`${base}/views`, { title: 'Lost view' }]],
    ['a schedule', () => [`${base}/schedules`, { template_id: templateId, cron_format: '@daily' }]],
    ['an integration', () => [`${base}/integrations`, { name: 'Lost hook', template_id: templateId }]],
    ['a project integration alias', () => [`${base}/integrations/aliases`, {}]],
    ['a runner registration token', () => [`${base}/runners/registration-tokens`, {}]],
    ['a task', () => [`${base}/tasks`, { template_id: templateId }]],
  ];

  it.each(creates)('creates %s, or nothing when its event cannot be written', async (_what, request) => {
    const [url, body] = request();
    const before = await rows();
    const allow = await rejectInserts(h, 'event');
    let res: Awaited<ReturnType<Client['post']>>;
    try {
      res = await admin.post(url, body);
    } finally {
      await allow();
    }
    expect(res.statusCode, res.body).toBe(500);
    expect(res.json()).toEqual(answeredError(res, { error: errorTexts.internal, code: 'internal' }));
    expect(await rows()).toEqual(before);
    // The same request succeeds once the database takes events again: the failure above was the event alone.
    const again = await admin.post(url, body);
    expect(again.statusCode, again.body).toBeLessThan(300);
  });
});
