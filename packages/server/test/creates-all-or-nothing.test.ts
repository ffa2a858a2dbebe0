import { errorTexts, isFinished } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from './support/dialects';
import { answeredError, type Client, createHarness, type Harness } from './support/harness';
import { rejectInserts } from './support/reject-inserts';
import { insertRunner } from './support/runner-rows';
import { waitFor } from './support/task-fixtures';
import { ansibleBody, templateFixtures } from './support/template-fixtures';

// A create that writes several rows (the resource, its default rows, its audit event) writes them in one
// transaction: when the database refuses the audit event, the client gets a 500 and none of the rows stay. A change
// or a delete and its event are one transaction too: a refused event leaves the resource as it was.

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
  'remote_runner',
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
  /** Creates a resource (events allowed) and answers its id. */
  const made = async (url: string, body: Record<string, unknown>) => {
    const res = await admin.post(url, body);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().id as number;
  };
  const repository = (name: string) => ({
    name,
    git_url: 'https://example.test/kept.git',
    git_branch: 'main',
    ssh_key_id: keyId,
  });
  const inventory = (name: string) => ({ name, type: 'static', inventory: 'localhost', ssh_key_id: keyId });

  type Change = [method: 'PUT' | 'POST' | 'DELETE', url: string, body?: unknown];
  /** A registered runner of the project (as registration stores it). */
  const runner = () => insertRunner(h.deps.db, { project_id: Number(base.split('/').at(-1)) });
  const user = (name: string) => ({
    name,
    username: name.toLowerCase().replace(/ /g, '-'),
    email: `${name.toLowerCase().replace(/ /g, '-')}@example.test`,
    password: 'kept-password-1',
  });
  const changes: [string, () => Promise<Change>][] = [
    [
      'a repository change',
      async () => {
        const id = await made(`${base}/repositories`, repository('Kept repo'));
        return ['PUT', `${base}/repositories/${id}`, repository('Renamed repo')];
      },
    ],
    [
      'a repository delete',
      async () => [
        'DELETE',
        `${base}/repositories/${await made(`${base}/repositories`, repository('Kept 2'))}`,
      ],
    ],
    [
      'an access key change',
      async () => {
        const id = await made(`${base}/keys`, { name: 'Kept key', type: 'none' });
        return ['PUT', `${base}/keys/${id}`, { name: 'Renamed key', type: 'none' }];
      },
    ],
    [
      'an access key delete',
      async () => [
        'DELETE',
        `${base}/keys/${await made(`${base}/keys`, { name: 'Kept key 2', type: 'none' })}`,
      ],
    ],
    [
      'an inventory change',
      async () => {
        const id = await made(`${base}/inventory`, inventory('Kept hosts'));
        return ['PUT', `${base}/inventory/${id}`, inventory('Renamed hosts')];
      },
    ],
    [
      'an environment change',
      async () => {
        const id = await made(`${base}/environment`, { name: 'Kept env', json: '{}' });
        return [
          'PUT',
          `${base}/environment/${id}`,
          { name: 'Renamed env', json: '{"a":1}', env: '{}', secrets: [] },
        ];
      },
    ],
    [
      'an environment delete',
      async () => [
        'DELETE',
        `${base}/environment/${await made(`${base}/environment`, { name: 'Kept env 2', json: '{}' })}`,
      ],
    ],
    [
      'a view change',
      async () => {
        const id = await made(`${base}/views`, { title: 'Kept view', position: 1 });
        return ['PUT', `${base}/views/${id}`, { title: 'Renamed view', position: 1 }];
      },
    ],
    [
      'a view delete',
      async () => [
        'DELETE',
        `${base}/views/${await made(`${base}/views`, { title: 'Kept view 2', position: 2 })}`,
      ],
    ],
    [
      'a project change',
      async () => {
        const id = await made('/api/projects', { name: 'Kept project' });
        return ['PUT', `/api/project/${id}`, { id, name: 'Renamed project' }];
      },
    ],
    [
      'a project delete',
      async () => ['DELETE', `/api/project/${await made('/api/projects', { name: 'Kept 3' })}`],
    ],
    [
      'a user change',
      async () => {
        const id = await made('/api/users', user('Kept user'));
        return [
          'PUT',
          `/api/users/${id}`,
          { name: 'Renamed', username: 'kept-user', email: 'kept-user@example.test' },
        ];
      },
    ],
    [
      'a password change',
      async () => [
        'POST',
        `/api/users/${await made('/api/users', user('Kept user 2'))}/password`,
        { password: 'changed-password-1' },
      ],
    ],
    ['a user delete', async () => ['DELETE', `/api/users/${await made('/api/users', user('Kept user 3'))}`]],
    [
      'an integration change',
      async () => {
        const id = await made(`${base}/integrations`, { name: 'Kept hook', template_id: templateId });
        return ['PUT', `${base}/integrations/${id}`, { name: 'Renamed hook', template_id: templateId }];
      },
    ],
    [
      'an integration delete',
      async () => [
        'DELETE',
        `${base}/integrations/${await made(`${base}/integrations`, { name: 'Kept hook 2', template_id: templateId })}`,
      ],
    ],
    [
      'an alias delete',
      async () => [
        'DELETE',
        `${base}/integrations/aliases/${await made(`${base}/integrations/aliases`, {})}`,
      ],
    ],
    [
      'a reordering of views',
      async () => {
        const id = await made(`${base}/views`, { title: 'Kept view 3', position: 3 });
        return ['POST', `${base}/views/positions`, { [id]: 7 }];
      },
    ],
    ['a runner change', async () => ['PUT', `${base}/runners/${await runner()}`, { name: 'renamed-runner' }]],
    ['a runner delete', async () => ['DELETE', `${base}/runners/${await runner()}`]],
  ];

  it.each(changes)('makes %s, or none when its event cannot be written', async (_what, prepare) => {
    // The task created above ends on its own and writes its status, then its event: wait for both, so that the
    // rows compared are only this request's.
    await waitFor(
      async () => {
        const tasks = await h.deps.db.selectFrom('task').select('status').execute();
        const ended = await h.deps.db
          .selectFrom('event')
          .select('id')
          .where('kind', '=', 'task.finished')
          .execute();
        return (tasks.every((t) => isFinished(t.status)) && ended.length >= tasks.length) || undefined;
      },
      30_000,
      'the tasks created above to end and record their events',
    );
    const [method, url, body] = await prepare();
    const before = await rows();
    const allow = await rejectInserts(h, 'event');
    let res: Awaited<ReturnType<Client['post']>>;
    try {
      res = await admin.request(method, url, body);
    } finally {
      await allow();
    }
    expect(res.statusCode, res.body).toBe(500);
    expect(JSON.parse(await rows())).toEqual(JSON.parse(before));
    const again = await admin.request(method, url, body);
    expect(again.statusCode, again.body).toBeLessThan(300);
  });
});
