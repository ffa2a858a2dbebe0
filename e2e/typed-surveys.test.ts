import { readFileSync } from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createUser, login } from './support/api';
import { seedBashProject } from './support/seed';
import { useSharedServerAsAdmin } from './support/shared';
import { expectSnackbar } from './support/team';

// A survey of every type built in the template editor (a visibility condition, an option list as a source, a
// keyboard reorder), then asked by the run dialog: conditional fields come and go, the option list's options are
// offered, bad answers come back from the server as field errors in English and in German, a good run starts.
const suite = useSharedServerAsAdmin();

type Var = {
  name: string;
  title: string;
  type: string;
  required?: boolean;
  values?: [label: string, value: string][];
  optionList?: string;
  rules?: Record<string, string>;
  pattern?: [regex: string, message: string];
  when?: [field: string, value: string];
};

async function pick(page: Page, scope: Locator | Page, label: string, option: string) {
  await scope.getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

async function addVar(page: Page, v: Var) {
  await page.getByRole('button', { name: 'Add variable' }).click();
  const d = page.getByRole('dialog');
  await d.getByRole('textbox', { name: 'Name', exact: true }).fill(v.name);
  await d.getByRole('textbox', { name: 'Title', exact: true }).fill(v.title);
  await pick(page, d, 'Type', v.type);
  if (v.required) await d.getByLabel('Required').check();
  for (const [label, value] of Object.entries(v.rules ?? {}))
    await d.getByRole('spinbutton', { name: label }).fill(value);
  if (v.pattern) {
    await d.getByRole('textbox', { name: 'Pattern (regular expression)' }).fill(v.pattern[0]);
    await d.getByRole('textbox', { name: 'Message when the pattern does not match' }).fill(v.pattern[1]);
  }
  for (const [label, value] of v.values ?? []) {
    await d.getByRole('button', { name: 'Add value' }).click();
    await d.getByRole('textbox', { name: 'Name', exact: true }).last().fill(label);
    await d.getByRole('textbox', { name: 'Value', exact: true }).last().fill(value);
  }
  if (v.optionList) {
    await d.getByRole('radio', { name: 'From a source' }).check();
    await pick(page, d, 'Source', 'Option list');
    await pick(page, d, 'Option list', v.optionList);
  }
  if (v.when) {
    await pick(page, d, 'Ask only when', v.when[0]);
    await pick(page, d, 'has one of these values', v.when[1]);
  }
  await d.getByRole('button', { name: 'Save' }).click();
  await d.waitFor({ state: 'detached' });
}

const rowNames = async (page: Page) =>
  (
    await page
      .locator('[data-testid^="survey-row-"]')
      .evaluateAll((rows) => rows.map((r) => r.dataset.testid))
  ).map((id) => String(id).replace('survey-row-', ''));

describe('typed surveys', () => {
  it('builds a survey of every type, asks it, refuses bad answers at their fields and runs good ones', async () => {
    const admin = suite.admin;
    const seeded = await seedBashProject(admin, `Typed surveys ${Date.now()}`, {
      Release: ['release.sh', 'echo "released"\n'],
    });
    const base = `/project/${seeded.projectId}`;
    const templateId = seeded.templates.Release as number;
    await admin.post(`${base}/option_lists`, {
      name: 'Regions',
      options: [
        { name: 'Europe West', value: 'eu-west' },
        { name: 'US East', value: 'us-east' },
      ],
    });

    const page = await suite.pageAs(admin);
    await page.goto(`${base}/templates/${templateId}/edit`);
    const vars: Var[] = [
      {
        name: 'target',
        title: 'Target',
        type: 'Enumeration',
        required: true,
        values: [
          ['Production', 'prod'],
          ['Development', 'dev'],
        ],
      },
      { name: 'approve', title: 'Approve', type: 'Yes/no', when: ['Target (target)', 'Production'] },
      { name: 'region', title: 'Region', type: 'Enumeration', required: true, optionList: 'Regions' },
      {
        name: 'hosts',
        title: 'Hosts',
        type: 'Multiple choice',
        required: true,
        rules: { 'Max. selected': '2' },
        values: [
          ['web1', 'web1'],
          ['web2', 'web2'],
          ['web3', 'web3'],
        ],
      },
      { name: 'replicas', title: 'Replicas', type: 'Integer', rules: { Minimum: '1', Maximum: '5' } },
      { name: 'ratio', title: 'Ratio', type: 'Number', rules: { Step: '0.5' } },
      {
        name: 'app_name',
        title: 'App name',
        type: 'String',
        pattern: ['^[a-z]+$', 'lower-case letters only'],
      },
      { name: 'token', title: 'Token', type: 'Secret' },
      { name: 'day', title: 'Day', type: 'Date' },
      { name: 'at', title: 'At', type: 'Date and time' },
      { name: 'labels', title: 'Labels', type: 'Key/value pairs' },
      { name: 'notes', title: 'Notes', type: 'Text (several lines)' },
    ];
    for (const v of vars) await addVar(page, v);
    // The preview renders the run form as it stands: the option list's options come when a task starts.
    const preview = page.getByRole('region', { name: 'Preview of the run form' });
    await preview.getByText('Options are fetched when the task starts.').waitFor();
    expect(await preview.getByRole('switch', { name: 'Approve' }).count()).toBe(0);

    // Keyboard reorder: Notes one place up, above Labels. dnd-kit starts listening for arrow keys a task after the
    // pick-up, so the arrow is pressed again only while Notes is still announced at its own place.
    expect((await rowNames(page)).slice(-2)).toEqual(['labels', 'notes']);
    await page.getByRole('button', { name: 'Move notes' }).focus();
    await page.keyboard.press('Space');
    const atOwnPlace = page.getByText('notes is at position 12.');
    const movedUp = page.getByText('notes is at position 11.');
    await atOwnPlace.waitFor({ state: 'attached' });
    for (let attempt = 0; attempt < 5 && (await movedUp.count()) === 0; attempt++) {
      await page.keyboard.press('ArrowUp');
      await movedUp.waitFor({ state: 'attached', timeout: 3000 }).catch(() => undefined);
    }
    await page.keyboard.press('Space');
    await page.getByText('notes moved to position 11.').waitFor({ state: 'attached' });
    expect((await rowNames(page)).slice(-2)).toEqual(['notes', 'labels']);

    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expectSnackbar(page, 'Template "Release" saved');
    const saved = await admin.get<{
      survey_vars: {
        name: string;
        type: string;
        visible_when: unknown;
        options_source: unknown;
        max: number | null;
        step: number | null;
        regex: string | null;
        max_selected: number | null;
      }[];
    }>(`${base}/templates/${templateId}`);
    const byName = Object.fromEntries(saved.survey_vars.map((v) => [v.name, v]));
    expect(saved.survey_vars.map((v) => `${v.name}:${v.type}`)).toEqual([
      'target:enum',
      'approve:boolean',
      'region:enum',
      'hosts:multiselect',
      'replicas:int',
      'ratio:number',
      'app_name:string',
      'token:secret',
      'day:date',
      'at:datetime',
      'notes:text',
      'labels:kv',
    ]);
    expect(byName.approve?.visible_when).toEqual({ field: 'target', values: ['prod'] });
    expect(byName.region?.options_source).toMatchObject({ type: 'option_list' });
    expect(byName.replicas?.max).toBe(5);
    expect(byName.ratio?.step).toBe(0.5);
    expect(byName.app_name?.regex).toBe('^[a-z]+$');
    expect(byName.hosts?.max_selected).toBe(2);

    // Export downloads the survey as JSON; another template imports it (after a refused try) and saves it.
    await page.goto(`${base}/templates/${templateId}/edit`);
    await page.getByTestId('survey-row-labels').waitFor();
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download survey as JSON' }).click();
    const exported = readFileSync(String(await (await downloading).path()), 'utf8');
    const other = await admin.post<{ id: number }>(`${base}/templates`, {
      name: 'Release copy',
      app: 'bash',
      playbook: 'release.sh',
      repository_id: seeded.repositoryId,
      environment_id: seeded.environmentId,
    });
    await page.goto(`${base}/templates/${other.id}/edit`);
    await page.getByRole('button', { name: 'Import' }).click();
    const importing = page.getByRole('dialog', { name: 'Import survey (JSON)' });
    const json = importing.getByRole('textbox', { name: 'Survey (JSON list of variables)' });
    await json.fill('[{"name": "colour", "title": "Colour", "type": "enum"}]');
    await importing.getByRole('button', { name: 'Import' }).click();
    await importing.getByText('Variable 1, values: Enumeration must have values.').waitFor();
    await json.fill(exported);
    await importing.getByRole('button', { name: 'Import' }).click();
    await importing.waitFor({ state: 'detached' });
    await page.getByTestId('survey-row-labels').waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expectSnackbar(page, 'Template "Release copy" saved');
    const copied = await admin.get<{ survey_vars: unknown[] }>(`${base}/templates/${other.id}`);
    expect(copied.survey_vars).toEqual(saved.survey_vars);
    await page.context().close();

    // The run dialog in English, then in German: bad answers are refused by the server, each at its field.
    const badRun = async (locale: string, expected: Record<string, string>) => {
      const p = await suite.pageAs(admin, { locale });
      await p.goto(`${base}/templates/${templateId}`);
      await p.getByRole('button', { name: locale === 'en-US' ? 'Run' : 'Ausführen', exact: true }).click();
      const d = p.getByRole('dialog');
      await d.getByRole('combobox', { name: 'Target' }).waitFor();
      // The condition: Approve is asked only while Target is Production.
      expect(await d.getByRole('switch', { name: 'Approve' }).count()).toBe(0);
      await pick(p, d, 'Target', 'Production');
      await d.getByRole('switch', { name: 'Approve' }).waitFor();
      await pick(p, d, 'Target', 'Development');
      await d.getByRole('switch', { name: 'Approve' }).waitFor({ state: 'detached' });
      // The option list's entries are the Region's options.
      await d.getByRole('combobox', { name: 'Region' }).click();
      expect(await p.getByRole('option').allTextContents()).toEqual(['Europe West', 'US East']);
      await p.getByRole('option', { name: 'US East' }).click();
      await d.getByRole('textbox', { name: 'Replicas' }).fill('9');
      await d.getByRole('spinbutton', { name: 'Ratio' }).fill('0.3');
      await d.getByRole('textbox', { name: 'App name' }).fill('ABC');
      const refused = p.waitForResponse((r) => /\/tasks$/.test(r.url()) && r.request().method() === 'POST');
      await d.locator('button[type=submit]').click();
      expect((await refused).status()).toBe(400);
      // Each error at its own field (the alert above repeats the first).
      for (const [name, text] of Object.entries(expected))
        await expect.poll(() => d.locator(`#survey-${name}-helper-text`).textContent()).toBe(text);
      return { page: p, dialog: d };
    };
    const german = await badRun('de-DE', {
      hosts: 'Hosts ist erforderlich',
      replicas: 'Replicas darf höchstens 5 sein',
      ratio: 'Ratio muss ein Vielfaches von 0.5 sein',
      app_name: 'App name: lower-case letters only',
    });
    await german.page.context().close();
    const { page: run, dialog: d } = await badRun('en-US', {
      hosts: 'Hosts is required',
      replicas: 'Replicas must be at most 5',
      ratio: 'Ratio must be a multiple of 0.5',
      app_name: 'App name: lower-case letters only',
    });

    // Good answers: the run starts with them typed, the secret apart.
    await pick(run, d, 'Target', 'Production');
    await d.getByRole('switch', { name: 'Approve' }).check();
    await d.getByRole('combobox', { name: 'Hosts' }).click();
    await run.getByRole('option', { name: 'web2' }).click();
    await d.getByRole('textbox', { name: 'Replicas' }).fill('3');
    await d.getByRole('spinbutton', { name: 'Ratio' }).fill('1.5');
    await d.getByRole('textbox', { name: 'App name' }).fill('shop');
    await d.locator('input[name="survey.token"]').fill('s3cret');
    await d.getByLabel('Day', { exact: true }).fill('2026-12-01');
    await d.getByLabel('At', { exact: true }).fill('2026-12-01T10:30');
    await d.getByRole('button', { name: 'Add a row to Labels' }).click();
    await d.getByRole('textbox', { name: 'Labels: key 1' }).fill('team');
    await d.getByRole('textbox', { name: 'Labels: value 1' }).fill('ops');
    await d.getByRole('textbox', { name: 'Notes' }).fill('first line\nsecond line');
    // A fixed field error goes as soon as its answer changes.
    expect(await d.locator('#survey-replicas-helper-text').count()).toBe(0);
    const created = run.waitForResponse((r) => /\/tasks$/.test(r.url()) && r.request().method() === 'POST');
    await d.getByRole('button', { name: 'Run', exact: true }).click();
    const response = await created;
    expect(response.status(), await response.text()).toBe(201);
    expect(response.request().postDataJSON().secret).toBe('{"token":"s3cret"}');
    await run.waitForURL(/[?&]t=\d+/);
    const taskId = Number(new URL(run.url()).searchParams.get('t'));
    const task = await admin.get<{ environment: string }>(`${base}/tasks/${taskId}`);
    const environment = JSON.parse(task.environment);
    expect(environment).toMatchObject({
      target: 'prod',
      approve: true,
      region: 'us-east',
      hosts: ['web2'],
      replicas: 3,
      ratio: 1.5,
      app_name: 'shop',
      day: '2026-12-01',
      labels: { team: 'ops' },
      notes: 'first line\nsecond line',
    });
    expect(environment.at).toMatch(/^2026-12-01T10:30:00(Z|[+-]\d\d:\d\d)$/);
    expect(environment).not.toHaveProperty('token');
    await run.context().close();
  });
});

describe('option lists page', () => {
  it('creates, edits and deletes an option list; a guest only reads', async () => {
    const admin = suite.admin;
    const { projectId } = await admin
      .post<{ id: number }>('/projects', { name: `Option lists ${Date.now()}` })
      .then((p) => ({ projectId: p.id }));
    const base = `/project/${projectId}`;
    const page = await suite.pageAs(admin);
    await page.goto(`${base}/history`);
    await page.getByRole('link', { name: 'Option Lists' }).click();
    await page.getByText('No option lists yet.').waitFor();
    await page.getByRole('button', { name: 'New Option List' }).click();
    const d = page.getByRole('dialog');
    await d.getByRole('textbox', { name: 'Name', exact: true }).fill('Sizes');
    await d.getByRole('textbox', { name: 'Label of entry 1' }).fill('Small');
    await d.getByRole('textbox', { name: 'Value of entry 1' }).fill('s');
    await d.getByRole('button', { name: 'Add entry' }).click();
    await d.getByRole('textbox', { name: 'Label of entry 2' }).fill('Also small');
    await d.getByRole('textbox', { name: 'Value of entry 2' }).fill('s');
    await d.getByRole('button', { name: 'Save' }).click();
    // Values are unique within a list: the contract says so before anything is sent.
    await d.getByText('The values of an option list must be unique').waitFor();
    await d.getByRole('textbox', { name: 'Label of entry 2' }).fill('Large');
    await d.getByRole('textbox', { name: 'Value of entry 2' }).fill('l');
    await d.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Option list Sizes created');
    const [created] = await admin.get<{ id: number; name: string; options: unknown[] }[]>(
      `${base}/option_lists`,
    );
    expect(created).toMatchObject({
      name: 'Sizes',
      options: [
        { name: 'Small', value: 's' },
        { name: 'Large', value: 'l' },
      ],
    });

    await page.getByRole('button', { name: 'Edit Sizes' }).click();
    await d.getByRole('button', { name: 'Remove entry 1' }).click();
    await d.getByRole('textbox', { name: 'Name', exact: true }).fill('Sizes EU');
    await d.getByRole('button', { name: 'Save' }).click();
    await expectSnackbar(page, 'Option list Sizes EU saved');
    expect(await admin.get(`${base}/option_lists/${created?.id}`)).toMatchObject({
      name: 'Sizes EU',
      options: [{ name: 'Large', value: 'l' }],
    });

    const guest = await createUser(admin, { name: 'Gail Guest' });
    await admin.post(`${base}/users`, { user_id: guest.id, role: 'guest' });
    const guestPage = await suite.pageAs(await login(suite.server.url, guest.username, guest.password));
    await guestPage.goto(`${base}/option_lists`);
    await guestPage.getByText('Sizes EU').waitFor();
    expect(await guestPage.getByRole('button', { name: 'New Option List' }).count()).toBe(0);
    expect(await guestPage.getByRole('button', { name: 'Delete Sizes EU' }).count()).toBe(0);
    await guestPage.getByRole('button', { name: 'View Sizes EU' }).click();
    expect(
      await guestPage.getByRole('dialog').getByRole('textbox', { name: 'Value of entry 1' }).isDisabled(),
    ).toBe(true);
    await guestPage.context().close();

    await page.getByRole('button', { name: 'Delete Sizes EU' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expectSnackbar(page, 'Option list Sizes EU deleted');
    expect(await admin.get(`${base}/option_lists`)).toEqual([]);
    await page.context().close();
  });
});
