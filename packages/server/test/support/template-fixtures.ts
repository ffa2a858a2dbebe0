import { expect } from 'vitest';
import { insertReturningId } from '../../src/db/values';
import type { Client, Harness } from './harness';
import { createTeam, type Team } from './permission-matrix';
import { taskRow } from './task-fixtures';

/**
 * Rows a template needs, inserted straight into the database (the key/repository/inventory/environment APIs
 * are built separately). Test-only.
 */
export async function templateFixtures(h: Harness, projectId: number) {
  const { db, dialect } = h.deps;
  const key = await insertReturningId(db, dialect, 'access_key', {
    project_id: projectId,
    name: 'Deploy key',
    type: 'none',
    secret: null,
    owner: '',
    environment_id: null,
  });
  const repository = await insertReturningId(db, dialect, 'repository', {
    project_id: projectId,
    name: 'Playbooks',
    git_url: 'https://example.test/playbooks.git',
    git_branch: 'main',
    ssh_key_id: key,
  });
  const otherRepository = await insertReturningId(db, dialect, 'repository', {
    project_id: projectId,
    name: 'Another repo',
    git_url: 'https://example.test/other.git',
    git_branch: 'main',
    ssh_key_id: key,
  });
  const inventory = await insertReturningId(db, dialect, 'inventory', {
    project_id: projectId,
    name: 'Hosts',
    type: 'static',
    inventory: 'localhost ansible_connection=local',
    ssh_key_id: key,
    become_key_id: null,
    repository_id: null,
  });
  const workspace = await insertReturningId(db, dialect, 'inventory', {
    project_id: projectId,
    name: 'Workspace',
    type: 'terraform-workspace',
    inventory: 'default',
    ssh_key_id: key,
    become_key_id: null,
    repository_id: null,
  });
  const tofuWorkspace = await insertReturningId(db, dialect, 'inventory', {
    project_id: projectId,
    name: 'Tofu workspace',
    type: 'tofu-workspace',
    inventory: 'default',
    ssh_key_id: key,
    become_key_id: null,
    repository_id: null,
  });
  const environment = await insertReturningId(db, dialect, 'environment', {
    project_id: projectId,
    name: 'Staging',
    json: '{}',
    env: '{}',
  });
  return { key, repository, otherRepository, inventory, workspace, tofuWorkspace, environment };
}
export type TemplateFixtures = Awaited<ReturnType<typeof templateFixtures>>;

/** A valid ansible template body for the fixtures. */
export const ansibleBody = (f: TemplateFixtures, extra: Record<string, unknown> = {}) => ({
  name: 'Deploy app',
  app: 'ansible',
  playbook: 'site.yml',
  inventory_id: f.inventory,
  repository_id: f.repository,
  environment_id: f.environment,
  ...extra,
});

/** Inserts a task row for a template (the task API is built separately). */
export async function insertTask(
  h: Harness,
  projectId: number,
  templateId: number,
  extra: Partial<{
    status: string;
    user_id: number | null;
    build_task_id: number | null;
    version: string;
  }> = {},
) {
  return insertReturningId(
    h.deps.db,
    h.deps.dialect,
    'task',
    taskRow(projectId, templateId, {
      secret: 'should-never-be-shown',
      ...extra,
    }),
  );
}

/** Row counts of the tables these features write, to assert that refused requests changed nothing. */
export async function snapshot(h: Harness) {
  const { db } = h.deps;
  const rows = async (table: 'template' | 'view' | 'task' | 'event') =>
    JSON.stringify(await db.selectFrom(table).selectAll().orderBy('id').execute());
  // The running scheduler marks when it last looked at a schedule (a check-new-commits one every few minutes);
  // that is its own bookkeeping, not a write of the request under test.
  const schedules = (await db.selectFrom('schedule').selectAll().orderBy('id').execute()).map(
    ({ last_tick, ...rest }) => rest,
  );
  return {
    template: await rows('template'),
    schedule: JSON.stringify(schedules),
    view: await rows('view'),
    task: await rows('task'),
    event: await rows('event'),
  };
}

/** The latest events about objects of `objectType` (description and object id), newest first. */
export function latestEventsOf(h: Harness, objectType: string, limit = 3) {
  return h.deps.db
    .selectFrom('event')
    .select(['description', 'object_id'])
    .where('object_type', '=', objectType)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * Updates the object `id` at `url` with `body` and deletes it as `client`; then the latest events about objects of
 * `objectType` are about it, with `descriptions` (newest first: deleted, updated, created).
 */
export async function expectUpdateDeleteEvents(
  h: Harness,
  client: Client,
  objectType: string,
  url: string,
  id: number,
  body: unknown,
  descriptions: string[],
) {
  await client.put(url, body);
  await client.del(url);
  expect(await latestEventsOf(h, objectType)).toEqual(
    descriptions.map((description) => ({ description, object_id: id })),
  );
}

/** The project of the template-area API tests: a team's project with its fixtures, and another team's project. */
export type TemplatesProject = {
  clients: Team;
  projectId: number;
  admin: Client;
  base: string;
  fx: TemplateFixtures;
  other: Team;
};

export async function createTemplatesProject(h: Harness): Promise<TemplatesProject> {
  const clients = await createTeam(h, 'Templates project');
  const fx = await templateFixtures(h, clients.projectId);
  const other = await createTeam(h, 'Other project');
  return {
    clients,
    projectId: clients.projectId,
    admin: clients.admin,
    base: `/api/project/${clients.projectId}`,
    fx,
    other,
  };
}

/** POSTs each body to `collectionUrl` and PUTs it to `itemUrl`: every one is refused with 400 and an error. */
export async function expectBodiesRefused(
  client: Client,
  collectionUrl: string,
  itemUrl: string,
  bodies: unknown[],
) {
  for (const body of bodies) {
    for (const res of [
      await client.request('POST', collectionUrl, body),
      await client.request('PUT', itemUrl, body),
    ]) {
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json()).toHaveProperty('error');
    }
  }
}
