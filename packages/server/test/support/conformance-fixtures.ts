import type { LightMyRequestResponse } from 'fastify';
import { insertOutput } from '../../src/tasks/output/output.store';
import { seedProject } from './api-walk';
import type { Client, Harness } from './harness';

/**
 * Fresh fixtures for one call of the Swagger conformance test, as a contract test that prepares every transaction
 * on its own: a new project with one object of every kind, all linked (a template of a git repository with its
 * inventory, environment, named vault key and view, a schedule, an integration with a matcher and an extracted
 * value, a task that ran and wrote output, a pending invite), a member and a user who is no member, and a spare
 * object of each kind nothing uses (what a DELETE removes).
 */
export type Fixtures = {
  project_id: number;
  project_name: string;
  key_id: number;
  repository_id: number;
  inventory_id: number;
  environment_id: number;
  view_id: number;
  template_id: number;
  schedule_id: number;
  integration_id: number;
  extractvalue_id: number;
  matcher_id: number;
  invite_id: number;
  task_id: number;
  /** A guest of the project (signed in). */
  member: Client;
  /** A user who is no member of the project (signed in). */
  outsider: Client;
  /** Objects of each kind nothing refers to. */
  spare: {
    key_id: number;
    repository_id: number;
    inventory_id: number;
    environment_id: number;
    view_id: number;
    template_id: number;
  };
};

/** The name of the vault of the fixtures' template (a password vault of its key). */
export const FIXTURE_VAULT = 'prod';
/** The lines of the fixtures' task that ran. */
export const FIXTURE_OUTPUT = ['hello', 'world'];

let made = 0;

/** Makes fresh fixtures in a new project of `owner` (an administrator), its template running `gitUrl`'s run.sh. */
export async function freshFixtures(h: Harness, owner: Client, gitUrl: string): Promise<Fixtures> {
  made += 1;
  const project_name = `Conformance ${made}`;
  const ids = await seedProject(h, owner, project_name, {
    templateInView: true,
    gitUrl,
    surveyVars: [{ name: 'who', title: 'Who', description: '', type: 'int', required: false, values: [] }],
  });
  const projectId = Number(ids.project_id);
  const base = `/api/project/${projectId}`;
  const ok = async (res: Promise<LightMyRequestResponse>) => {
    const r = await res;
    if (r.statusCode >= 300) throw new Error(`fixture failed: ${r.statusCode} ${r.body}`);
    return r.statusCode === 204 ? {} : r.json();
  };
  // The template's vault is its key, under a name of its own.
  await h.deps.db
    .updateTable('template')
    .set({ vault_key_id: Number(ids.key), vault_name: FIXTURE_VAULT })
    .where('id', '=', Number(ids.templates))
    .execute();
  // The task ran: its output is stored as the engine stores it.
  const time = new Date().toISOString();
  await insertOutput(
    h.deps.db,
    h.deps.dialect,
    FIXTURE_OUTPUT.map((output) => ({ task_id: Number(ids.task_id), time, output })),
  );
  const member = await h.userClient();
  await ok(owner.post(`${base}/users`, { user_id: member.userId, role: 'guest' }));
  const outsider = await h.userClient();

  const spareKey = await ok(owner.post(`${base}/keys`, { name: 'spare key', type: 'none' }));
  const spareRepo = await ok(
    owner.post(`${base}/repositories`, {
      name: 'spare repo',
      git_url: gitUrl,
      git_branch: '',
      ssh_key_id: ids.key,
    }),
  );
  const spareInventory = await ok(
    owner.post(`${base}/inventory`, {
      name: 'spare inventory',
      type: 'static',
      inventory: 'localhost',
      ssh_key_id: ids.key,
    }),
  );
  const spareEnvironment = await ok(
    owner.post(`${base}/environment`, { name: 'spare environment', json: '{}', env: '{}' }),
  );
  const spareView = await ok(owner.post(`${base}/views`, { title: 'spare view', position: 1 }));
  const spareTemplate = await ok(
    owner.post(`${base}/templates`, {
      name: 'spare template',
      app: 'bash',
      playbook: 'run.sh',
      repository_id: ids.repositories,
      inventory_id: ids.inventory,
      environment_id: ids.environment,
    }),
  );
  return {
    project_id: projectId,
    project_name,
    key_id: Number(ids.key),
    repository_id: Number(ids.repositories),
    inventory_id: Number(ids.inventory),
    environment_id: Number(ids.environment),
    view_id: Number(ids.views),
    template_id: Number(ids.templates),
    schedule_id: Number(ids.schedules),
    integration_id: Number(ids.integrations),
    extractvalue_id: Number(ids.value_id),
    matcher_id: Number(ids.matcher_id),
    invite_id: Number(ids.invite_id),
    task_id: Number(ids.task_id),
    member,
    outsider,
    spare: {
      key_id: spareKey.id,
      repository_id: spareRepo.id,
      inventory_id: spareInventory.id,
      environment_id: spareEnvironment.id,
      view_id: spareView.id,
      template_id: spareTemplate.id,
    },
  };
}

/** The path parameters the fixtures fill (a step may name others, such as a spare object's id). */
export function pathIdsOf(f: Fixtures): Record<string, unknown> {
  return {
    project_id: f.project_id,
    key_id: f.key_id,
    repository_id: f.repository_id,
    inventory_id: f.inventory_id,
    environment_id: f.environment_id,
    view_id: f.view_id,
    template_id: f.template_id,
    schedule_id: f.schedule_id,
    integration_id: f.integration_id,
    extractvalue_id: f.extractvalue_id,
    matcher_id: f.matcher_id,
    invite_id: f.invite_id,
    task_id: f.task_id,
    user_id: f.member.userId,
  };
}
