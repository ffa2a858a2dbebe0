import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Api, createUser, login } from './support/api';
import { DESKTOP, launch, newContext, PHONE, shot, useSession } from './support/browser';
import { seedBashProject, waitForStatus } from './support/seed';
import { ADMIN, startServer, type TestServer } from './support/server';

// Every screen of the console, light and dark, at 1280×800 and 390×844, saved to .e2e-artifacts/screenshots.
let server: TestServer;
let browser: Browser;
let admin: Api;
let projectId: number;
let taskId: number;
let surveyTemplateId: number;

beforeAll(async () => {
  server = await startServer();
  browser = await launch();
  admin = await login(server.url, ADMIN.login, ADMIN.password);
  const seeded = await seedBashProject(admin, 'Platform Operations', {
    'Deploy web': [
      'deploy.sh',
      'for i in 1 2 3 4 5 6; do printf "\\033[1;34m==>\\033[0m step %d\\n" $i; done\nprintf "\\033[32mok: all hosts\\033[0m\\n"\n',
    ],
    'Nightly backup': ['backup.sh', 'echo "backup done"\n'],
    'Broken check': ['broken.sh', 'printf "\\033[31mfatal: check failed\\033[0m\\n"; exit 2\n'],
  });
  projectId = seeded.projectId;
  for (const name of ['Deploy web', 'Nightly backup', 'Broken check', 'Deploy web']) {
    const task = await admin.post<{ id: number }>(`/project/${projectId}/tasks`, {
      template_id: seeded.templates[name],
      message: name === 'Deploy web' ? 'Release 2.4' : '',
    });
    await waitForStatus(admin, projectId, task.id, ['success', 'error']);
    taskId = task.id;
  }
  // A template whose survey has every type: the survey editor and the run dialog are shown with it.
  const regions = await admin.post<{ id: number }>(`/project/${projectId}/option_lists`, {
    name: 'Regions',
    options: [
      { name: 'Europe West', value: 'eu-west' },
      { name: 'US East', value: 'us-east' },
    ],
  });
  const typed = (v: Record<string, unknown>) => ({
    description: '',
    required: false,
    default_value: '',
    ...v,
  });
  surveyTemplateId = (
    await admin.post<{ id: number }>(`/project/${projectId}/templates`, {
      name: 'Release',
      app: 'bash',
      playbook: 'deploy.sh',
      repository_id: seeded.repositoryId,
      environment_id: seeded.environmentId,
      project_id: projectId,
      survey_vars: [
        typed({
          name: 'target',
          title: 'Target',
          type: 'enum',
          required: true,
          default_value: 'prod',
          values: [
            { name: 'Production', value: 'prod' },
            { name: 'Staging', value: 'staging' },
          ],
        }),
        typed({
          name: 'approve',
          title: 'Change approved',
          type: 'boolean',
          description: 'Production releases need an approved change.',
          visible_when: { field: 'target', values: ['prod'] },
        }),
        typed({
          name: 'region',
          title: 'Region',
          type: 'enum',
          options_source: { type: 'option_list', option_list_id: regions.id },
        }),
        typed({
          name: 'hosts',
          title: 'Hosts',
          type: 'multiselect',
          required: true,
          max_selected: 2,
          values: ['web1', 'web2', 'web3'].map((h) => ({ name: h, value: h })),
        }),
        typed({ name: 'replicas', title: 'Replicas', type: 'int', min: 1, max: 5, default_value: '3' }),
        typed({ name: 'ratio', title: 'Canary share', type: 'number', min: 0, max: 1, step: 0.05 }),
        typed({
          name: 'version',
          title: 'Version',
          type: 'string',
          regex: '^\\d+\\.\\d+\\.\\d+$',
          regex_message: 'Use a version such as 2.4.1',
        }),
        typed({ name: 'notes', title: 'Release notes', type: 'text' }),
        typed({ name: 'token', title: 'Deploy token', type: 'secret' }),
        typed({ name: 'day', title: 'Freeze ends', type: 'date' }),
        typed({ name: 'at', title: 'Start at', type: 'datetime' }),
        typed({ name: 'labels', title: 'Labels', type: 'kv', default_value: '{"team":"ops"}' }),
      ],
    })
  ).id;
  await admin.post('/projects', { name: 'Data Pipelines' });
  await admin.post('/projects', { name: 'Edge Network' });
  for (const [name, username, role] of [
    ['Lina Park', 'lina', 'manager'],
    ['Omar Haddad', 'omar', 'task_runner'],
    ['Sofia Rossi', 'sofia', 'guest'],
  ] as const) {
    const user = await createUser(admin, { name, username });
    await admin.post(`/project/${projectId}/users`, { user_id: user.id, role });
  }
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const configs = [
  { scheme: 'light', viewport: DESKTOP, size: '1280' },
  { scheme: 'dark', viewport: DESKTOP, size: '1280' },
  { scheme: 'light', viewport: PHONE, size: '390' },
  { scheme: 'dark', viewport: PHONE, size: '390' },
] as const;

describe.each(configs)('screens ($scheme, $size px)', ({ scheme, viewport, size }) => {
  let page: Page;
  const name = (screen: string) => `${screen}-${scheme}-${size}`;
  const history = (page: Page) => page.getByRole(viewport === PHONE ? 'list' : 'table', { name: 'History' });

  beforeAll(async () => {
    const context = await newContext(browser, server.url, { viewport, colorScheme: scheme });
    page = await context.newPage();
  });
  afterAll(async () => page?.context().close());

  it('sign-in and help', async () => {
    await page.goto('/auth/login');
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await shot(page, name('login'));
    await page.getByRole('button', { name: "Can't sign in?" }).click();
    await page.getByRole('dialog').waitFor();
    await shot(page, name('login-help'));
    await useSession(page.context(), server.url, admin.cookie);
  });

  it('project pages', async () => {
    await page.goto(`/project/${projectId}/history`);
    // A table at desktop width, cards at phone width (as the activity log below).
    await history(page).getByText('Deploy web').first().waitFor();
    await shot(page, name('history'));
    await page.goto(`/project/${projectId}/activity`);
    // A table at desktop width, cards at phone width.
    await page.getByRole(viewport === PHONE ? 'list' : 'table', { name: 'Activity' }).waitFor();
    await shot(page, name('activity'));
    await page.goto(`/project/${projectId}/settings`);
    await page.getByRole('button', { name: 'Backup' }).waitFor();
    await shot(page, name('settings'));
    await page.goto(`/project/${projectId}/team`);
    await page.getByText('Sofia Rossi').waitFor();
    await shot(page, name('team'));
    await page.goto('/project/new');
    await page.getByRole('button', { name: 'Create Demo Project' }).waitFor();
    await shot(page, name('project-new'));
  });

  it('drawer and menus', async () => {
    await page.goto(`/project/${projectId}/history`);
    await history(page).waitFor();
    if (viewport === PHONE) {
      await page.getByRole('button', { name: 'Open menu' }).click();
      await page.getByRole('button', { name: 'Select project' }).waitFor();
      await shot(page, name('drawer'));
    }
    await page.getByRole('button', { name: 'Select project' }).click();
    await page.getByRole('menuitem', { name: 'New project' }).waitFor();
    await shot(page, name('project-menu'));
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'User menu' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).waitFor();
    await shot(page, name('user-menu'));
    await page.keyboard.press('Escape');
  });

  it('API tokens dialog', async () => {
    await page.goto(`/project/${projectId}/history`);
    await history(page).waitFor();
    if (viewport === PHONE) await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('button', { name: 'User menu' }).click();
    await page.getByRole('menuitem', { name: 'API tokens' }).click();
    const dialog = page.getByRole('dialog', { name: 'API tokens' });
    await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(`CI pipeline ${scheme} ${size}`);
    await dialog.getByRole('button', { name: 'Create token' }).click();
    await dialog.getByRole('textbox', { name: 'New token' }).waitFor();
    await page.mouse.move(0, 0);
    await shot(page, name('api-tokens'));
    const overflow = await dialog.evaluate((el) => {
      const paper = el.querySelector('.MuiDialog-paper') ?? el;
      return paper.scrollWidth - paper.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(1);
    await page.keyboard.press('Escape');
  });

  it('users and the user dialog', async () => {
    await page.goto('/users');
    await page.getByText('Lina Park').waitFor();
    await shot(page, name('users'));
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    await page.getByRole('dialog').getByText('Name is required', { exact: true }).waitFor();
    await shot(page, name('user-dialog'));
  });

  it('survey editor, variable dialog and preview', async () => {
    await page.goto(`/project/${projectId}/templates/${surveyTemplateId}/edit`);
    const list = page.getByRole('list', { name: 'Survey variables' });
    await list.getByTestId('survey-row-labels').waitFor();
    await list.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    await shot(page, name('survey-editor'));
    const preview = page.getByRole('region', { name: 'Preview of the run form' });
    await preview.scrollIntoViewIfNeeded();
    await shot(page, name('survey-preview'));
    await page.getByRole('button', { name: 'Edit approve' }).click();
    const d = page.getByRole('dialog');
    await d.getByRole('combobox', { name: 'Ask only when' }).waitFor();
    await shot(page, name('survey-var-dialog'));
    const overflow = await d.evaluate((el) => {
      const paper = el.querySelector('.MuiDialog-paper') ?? el;
      return paper.scrollWidth - paper.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(1);
    await d.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Edit region' }).click();
    await d.getByRole('combobox', { name: 'Option list' }).waitFor();
    await shot(page, name('survey-var-source'));
    await d.getByRole('button', { name: 'Cancel' }).click();
  });

  it('run dialog of a typed survey', async () => {
    await page.goto(`/project/${projectId}/templates/${surveyTemplateId}`);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const d = page.getByRole('dialog');
    await d.getByRole('switch', { name: 'Change approved' }).waitFor();
    await page.mouse.move(0, 0);
    await shot(page, name('survey-run'));
    await d.getByRole('textbox', { name: 'Replicas' }).fill('9');
    await d.getByRole('textbox', { name: 'Version' }).fill('next');
    await d.getByRole('button', { name: 'Run', exact: true }).click();
    await d.locator('#survey-replicas-helper-text').getByText('Replicas must be at most 5').waitFor();
    await shot(page, name('survey-run-errors'));
    const overflow = await d.evaluate((el) => {
      const paper = el.querySelector('.MuiDialog-paper') ?? el;
      return paper.scrollWidth - paper.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(1);
    await page.keyboard.press('Escape');
  });

  it('option lists', async () => {
    await page.goto(`/project/${projectId}/option_lists`);
    await page.getByText('Regions').first().waitFor();
    await shot(page, name('option-lists'));
    await page.getByRole('button', { name: 'Edit Regions' }).click();
    await page.getByRole('dialog').getByRole('textbox', { name: 'Label of entry 2' }).waitFor();
    await page.mouse.move(0, 0);
    await shot(page, name('option-list-dialog'));
    await page.keyboard.press('Escape');
  });

  it('task log dialog', async () => {
    await page.goto(`/project/${projectId}/history?t=${taskId}`);
    await page.getByRole('dialog').getByText('ok: all hosts').waitFor();
    await shot(page, name('task-log'));
  });
});
