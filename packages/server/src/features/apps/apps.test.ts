import { coded, errorMessage } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  ansibleBody,
  snapshot,
  type TemplateFixtures,
  templateFixtures,
} from '../../../test/support/template-fixtures';
import { appRegistry } from '../../lib/apps';

/** The registry these tests' server runs with: pulumi switched off, python on its own binary and title. */
const configured = appRegistry({
  pulumi: { active: false },
  python: { path: '/opt/python/bin/python3', args: ['-X', 'utf8'], title: 'Python 3.12' },
  terragrunt: { priority: 1100, icon: 'mdi-terraform', color: '#5e3fbe' },
});

describe.each(testDialects())('the app registry on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let user: Client;
  let manager: Client;
  let projectId: number;
  let f: TemplateFixtures;

  beforeAll(async () => {
    h = await createHarness(dialect, { apps: configured });
    admin = await h.userClient({ admin: true });
    user = await h.userClient();
    const team = await h.projectWithTeam(admin);
    projectId = team.projectId;
    manager = team.members.manager;
    f = await templateFixtures(h, projectId);
  });
  afterAll(() => h?.close());

  describe('GET /api/apps', () => {
    it('needs a signed-in user', async () => {
      const res = await h.anonymous().get('/api/apps');
      expect(res.statusCode).toBe(401);
    });

    it('lists every app, highest priority first, with the configured display settings', async () => {
      const res = await user.get('/api/apps');
      expect(res.statusCode).toBe(200);
      const list = res.json() as Record<string, unknown>[];
      expect(list.map((a) => a.id)).toEqual([
        'terragrunt',
        'ansible',
        'terraform',
        'tofu',
        'bash',
        'powershell',
        'python',
        'pulumi',
      ]);
      expect(list[0]).toEqual({
        id: 'terragrunt',
        title: 'Terragrunt',
        icon: 'mdi-terraform',
        color: '#5e3fbe',
        dark_color: '',
        active: true,
        priority: 1100,
        installed: expect.any(Boolean),
      });
      expect(list.find((a) => a.id === 'python')).toMatchObject({ title: 'Python 3.12', active: true });
      expect(list.find((a) => a.id === 'pulumi')).toMatchObject({ title: 'Pulumi', active: false });
      expect(list.find((a) => a.id === 'powershell')).toMatchObject({ title: 'PowerShell', active: true });
    });

    it("says whether each app's binary is found on the server, to every user", async () => {
      const list = (await user.get('/api/apps')).json() as Record<string, unknown>[];
      // bash is on PATH; python is configured at a path that does not exist here.
      expect(list.find((a) => a.id === 'bash')?.installed).toBe(true);
      expect(list.find((a) => a.id === 'python')?.installed).toBe(false);
      for (const a of list) expect(typeof a.installed, String(a.id)).toBe('boolean');
    });

    it('shows how each app runs to administrators only', async () => {
      for (const client of [user, manager]) {
        const list = (await client.get('/api/apps')).json() as Record<string, unknown>[];
        for (const a of list) {
          expect(a).not.toHaveProperty('path');
          expect(a).not.toHaveProperty('args');
        }
      }
      const list = (await admin.get('/api/apps')).json() as Record<string, unknown>[];
      expect(list.find((a) => a.id === 'python')).toMatchObject({
        path: '/opt/python/bin/python3',
        args: ['-X', 'utf8'],
      });
      expect(list.find((a) => a.id === 'powershell')).toMatchObject({
        path: 'pwsh',
        args: ['-NoProfile', '-NonInteractive'],
      });
      expect(list.find((a) => a.id === 'terragrunt')).toMatchObject({ path: 'terragrunt', args: [] });
    });
  });

  describe('templates of the new apps', () => {
    const templates = (client: Client = manager) => ({
      create: (body: Record<string, unknown>) => client.post(`/api/project/${projectId}/templates`, body),
      update: (id: number, body: Record<string, unknown>) =>
        client.put(`/api/project/${projectId}/templates/${id}`, { ...body, id }),
    });

    it('creates python and powershell templates, which need a script', async () => {
      for (const [app, playbook] of [
        ['python', 'scripts/deploy.py'],
        ['powershell', 'scripts/deploy.ps1'],
      ] as const) {
        const res = await templates().create(
          ansibleBody(f, { name: app, app, playbook, inventory_id: null }),
        );
        expect(res.statusCode, res.body).toBe(201);
        expect(res.json()).toMatchObject({ app, playbook, inventory_id: null });
        const missing = await templates().create(ansibleBody(f, { name: `${app} 2`, app, playbook: '' }));
        expect(missing.statusCode).toBe(400);
        expect(missing.json().fields).toEqual({ playbook: 'Playbook filename is required' });
      }
    });

    it('a terragrunt template takes a terragrunt workspace, made through the inventory API', async () => {
      const inv = await manager.post(`/api/project/${projectId}/inventory`, {
        name: 'Staging (Terragrunt)',
        type: 'terragrunt-workspace',
        inventory: 'staging',
        ssh_key_id: f.key,
      });
      expect(inv.statusCode, inv.body).toBe(201);
      expect(inv.json()).toMatchObject({ type: 'terragrunt-workspace', inventory: 'staging' });
      const badName = await manager.post(`/api/project/${projectId}/inventory`, {
        name: 'Bad',
        type: 'terragrunt-workspace',
        inventory: '-chdir=/etc',
        ssh_key_id: f.key,
      });
      expect(badName.statusCode).toBe(400);
      expect(badName.json().fields.inventory).toMatch(/^Workspace name may contain only/);

      const body = { name: 'Live', app: 'terragrunt', playbook: 'live/prod', inventory_id: inv.json().id };
      const ok = await templates().create(ansibleBody(f, body));
      expect(ok.statusCode, ok.body).toBe(201);
      expect(ok.json()).toMatchObject({ app: 'terragrunt', playbook: 'live/prod' });
      const noInventory = await templates().create(
        ansibleBody(f, { ...body, name: 'Live 2', inventory_id: null }),
      );
      expect(noInventory.statusCode).toBe(201);

      const wrong = await templates().create(
        ansibleBody(f, { ...body, name: 'Live 3', inventory_id: f.workspace }),
      );
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json()).toMatchObject({
        error: 'The terragrunt app needs an inventory of type terragrunt-workspace',
        fields: { inventory_id: 'The terragrunt app needs an inventory of type terragrunt-workspace' },
      });
      // And the other way round: terraform does not take a terragrunt workspace.
      const tf = await templates().create(
        ansibleBody(f, { ...body, name: 'TF', app: 'terraform', inventory_id: inv.json().id }),
      );
      expect(tf.statusCode).toBe(400);
      expect(tf.json().fields.inventory_id).toBe(
        'The terraform app needs an inventory of type terraform-workspace',
      );
    });

    it('an inactive app is a 400 naming it, on create and on update, for an admin too', async () => {
      const message = errorMessage(coded('app_inactive', { app: 'pulumi' }));
      const before = await snapshot(h);
      const body = ansibleBody(f, { name: 'Stack', app: 'pulumi', playbook: 'infra', inventory_id: null });
      for (const client of [manager, admin]) {
        const res = await templates(client).create(body);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: message, fields: { app: message } });
      }
      expect(await snapshot(h)).toEqual(before);

      const created = await templates().create(
        ansibleBody(f, { name: 'Was bash', app: 'bash', playbook: 'run.sh' }),
      );
      expect(created.statusCode).toBe(201);
      const id = created.json().id as number;
      const changed = await templates().update(id, { ...body, name: 'Was bash' });
      expect(changed.statusCode).toBe(400);
      expect(changed.json()).toMatchObject({ error: message, fields: { app: message } });
      const stored = await manager.get(`/api/project/${projectId}/templates/${id}`);
      expect(stored.json()).toMatchObject({ app: 'bash', playbook: 'run.sh' });
    });

    it('an app that does not exist is a 400 listing the apps', async () => {
      const res = await templates().create(ansibleBody(f, { name: 'Ruby', app: 'ruby' }));
      expect(res.statusCode).toBe(400);
      expect(res.json().fields.app).toBe(
        'App must be one of ansible, terraform, tofu, bash, pulumi, terragrunt, powershell, python',
      );
    });
  });
});
