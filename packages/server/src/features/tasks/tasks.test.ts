import type { ProjectRole } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  commitFiles,
  gitRepo,
  insertRepository,
  insertTemplate,
  taskRow,
  waitForStatus,
} from '../../../test/support/task-fixtures';

describe.each(testDialects())('task API on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let outsider: Client;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let otherProject: number;
  let tpl: number;
  let otherTpl: number;
  let finishedTask: number;
  const p = (path: string) => `/api/project/${projectId}${path}`;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
    const owner = await h.userClient({ can_create_project: true });
    outsider = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    ({ projectId: otherProject } = await h.projectWithTeam(outsider, 'Other'));
    const repo = gitRepo({
      'ok.sh': 'printf "\\033[32mgreen\\033[0m line\\n"; for i in 1 2 3 4; do echo "n$i"; done\n',
    });
    const rid = await insertRepository(h.deps, projectId, { git_url: repo });
    tpl = await insertTemplate(h.deps, projectId, {
      name: 'Deploy app',
      repository_id: rid,
      playbook: 'ok.sh',
      allow_parallel_tasks: 1,
    });
    const orid = await insertRepository(h.deps, otherProject, { git_url: repo });
    otherTpl = await insertTemplate(h.deps, otherProject, { repository_id: orid, playbook: 'ok.sh' });
    const res = await members.owner.post(p('/tasks'), { template_id: tpl, message: 'seed' });
    finishedTask = res.json().id;
    await waitForStatus(h.deps, finishedTask, ['success']);
  });
  afterAll(async () => h?.close());

  const clients = (): [string, Client][] => [
    ['admin', admin],
    ['owner', members.owner],
    ['manager', members.manager],
    ['task_runner', members.task_runner],
    ['guest', members.guest],
    ['non-member', outsider],
    ['anonymous', h.anonymous()],
  ];
  const countTasks = async () =>
    Number(
      (
        await h.deps.db
          .selectFrom('task')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirst()
      )?.n,
    );

  it('creates tasks with runProjectTasks only', async () => {
    const expected: Record<string, number> = {
      admin: 201,
      owner: 201,
      manager: 201,
      task_runner: 201,
      guest: 403,
      'non-member': 403,
      anonymous: 401,
    };
    for (const [name, client] of clients()) {
      const res = await client.post(p('/tasks'), { template_id: tpl });
      expect(res.statusCode, name).toBe(expected[name]);
      if (res.statusCode === 201) {
        expect(res.json()).toMatchObject({ template_id: tpl, project_id: projectId, status: 'waiting' });
        await waitForStatus(h.deps, res.json().id, ['success']);
      } else expect(res.json()).toHaveProperty('error');
    }
  });

  it('lets members read tasks, output and template task lists', async () => {
    const reads = [
      p('/tasks'),
      p('/tasks/last'),
      p(`/tasks/${finishedTask}`),
      p(`/tasks/${finishedTask}/output`),
      p(`/tasks/${finishedTask}/raw_output`),
      p(`/templates/${tpl}/tasks`),
      p(`/templates/${tpl}/tasks/last`),
    ];
    for (const url of reads) {
      for (const [name, client] of clients()) {
        const res = await client.get(url);
        const want = name === 'non-member' ? 403 : name === 'anonymous' ? 401 : 200;
        expect(res.statusCode, `${name} GET ${url}`).toBe(want);
      }
    }
  });

  it('gates confirm, reject, stop, rerun and stop_all_tasks on runProjectTasks', async () => {
    for (const [name, client] of clients()) {
      const runner = ['admin', 'owner', 'manager', 'task_runner'].includes(name);
      const deny = name === 'anonymous' ? 401 : 403;
      const confirm = await client.post(p(`/tasks/${finishedTask}/confirm`), {});
      expect(confirm.statusCode, `${name} confirm`).toBe(runner ? 400 : deny);
      const reject = await client.post(p(`/tasks/${finishedTask}/reject`), {});
      expect(reject.statusCode, `${name} reject`).toBe(runner ? 400 : deny);
      const stop = await client.post(p(`/tasks/${finishedTask}/stop`), { force: false });
      expect(stop.statusCode, `${name} stop`).toBe(runner ? 204 : deny);
      const all = await client.post(p(`/templates/${tpl}/stop_all_tasks`), {});
      expect(all.statusCode, `${name} stop_all`).toBe(runner ? 204 : deny);
      const rerun = await client.post(p(`/tasks/${finishedTask}/rerun`), {});
      expect(rerun.statusCode, `${name} rerun`).toBe(runner ? 201 : deny);
      if (runner) await waitForStatus(h.deps, rerun.json().id, ['success']);
    }
  });

  it("runs again at an earlier task's commit, or at the branch head, refusing a task of another template", async () => {
    const dir = gitRepo({ 'v.sh': 'echo first\n' });
    const rid = await insertRepository(h.deps, projectId, { git_url: dir });
    const own = await insertTemplate(h.deps, projectId, {
      name: 'Versioned',
      repository_id: rid,
      playbook: 'v.sh',
    });
    const first = (await members.task_runner.post(p('/tasks'), { template_id: own })).json().id;
    const firstDone = await waitForStatus(h.deps, first, ['success']);
    expect(firstDone.commit_hash).toBeTruthy();
    const head = commitFiles(dir, { 'v.sh': 'echo second\n' }, 'second commit');

    const again = await members.task_runner.post(p('/tasks'), { template_id: own, commit_of_task: first });
    expect(again.statusCode, again.body).toBe(201);
    expect((await waitForStatus(h.deps, again.json().id, ['success'])).commit_hash).toBe(
      firstDone.commit_hash,
    );
    const latest = await members.task_runner.post(p('/tasks'), { template_id: own });
    expect((await waitForStatus(h.deps, latest.json().id, ['success'])).commit_hash).toBe(head);

    const before = await countTasks();
    for (const [commit_of_task, error] of [
      [finishedTask, `Task ${finishedTask} is not a task of this template`],
      [999999, 'Task 999999 is not a task of this template'],
      ['abc', 'Commit of task must be a number'],
      [-1, 'Commit of task must be 0 or greater'],
    ] as const) {
      const res = await members.task_runner.post(p('/tasks'), { template_id: own, commit_of_task });
      expect(res.statusCode, String(commit_of_task)).toBe(400);
      expect(res.json().error).toContain(error);
    }
    // A task of another project is not found in this one either.
    const foreign = (
      await outsider.post(`/api/project/${otherProject}/tasks`, { template_id: otherTpl })
    ).json().id;
    await waitForStatus(h.deps, foreign, ['success']);
    const res = await members.task_runner.post(p('/tasks'), { template_id: own, commit_of_task: foreign });
    expect(res.statusCode).toBe(400);
    expect(await countTasks()).toBe(before + 1);
  });

  it('deletes finished tasks and their output for admins only', async () => {
    const id = (await members.owner.post(p('/tasks'), { template_id: tpl })).json().id;
    await waitForStatus(h.deps, id, ['success']);
    for (const [name, client] of clients()) {
      if (name === 'admin') continue;
      const res = await client.del(p(`/tasks/${id}`));
      expect(res.statusCode, name).toBe(name === 'anonymous' ? 401 : 403);
    }
    expect((await admin.del(p(`/tasks/${id}`))).statusCode).toBe(204);
    expect((await admin.get(p(`/tasks/${id}`))).statusCode).toBe(404);
    const rows = await h.deps.db.selectFrom('task_output').select('id').where('task_id', '=', id).execute();
    expect(rows).toEqual([]);
    // An unfinished task cannot be deleted.
    const waiting = await h.deps.db
      .insertInto('task')
      .values(
        taskRow(projectId, tpl, {
          status: 'waiting_confirmation',
        }),
      )
      .execute();
    void waiting;
    const open = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('status', '=', 'waiting_confirmation')
      .executeTakeFirstOrThrow();
    const refused = await admin.del(p(`/tasks/${open.id}`));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toBe('Only a finished task can be deleted; stop it first');
    await h.deps.db.updateTable('task').set({ status: 'error' }).where('id', '=', open.id).execute();
  });

  it('returns output lines in order, paged, and raw output without ANSI codes', async () => {
    const all = (await members.guest.get(p(`/tasks/${finishedTask}/output`))).json();
    const texts = all.map((r: { output: string }) => r.output);
    expect(texts).toContain('\u001b[32mgreen\u001b[0m line');
    const ids = all.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    const page = (await members.guest.get(p(`/tasks/${finishedTask}/output?offset=2&limit=3`))).json();
    expect(page.map((r: { output: string }) => r.output)).toEqual(texts.slice(2, 5));
    expect(page[0]).toMatchObject({ task_id: finishedTask });
    const raw = await members.guest.get(p(`/tasks/${finishedTask}/raw_output`));
    expect(raw.headers['content-type']).toMatch(/^text\/plain/);
    expect(raw.body).toContain('green line\nn1\nn2\nn3\nn4\n');
    expect(raw.body).not.toContain('\u001b');
    const bad = await members.guest.get(p(`/tasks/${finishedTask}/output?limit=0`));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('Limit must be 1 or greater');
  });

  it('lists last tasks with template and user fields', async () => {
    const res = await members.guest.get(p('/tasks/last?limit=2'));
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({
      tpl_alias: 'Deploy app',
      tpl_type: '',
      tpl_app: 'bash',
      build_task: null,
    });
    expect(list[0]).toHaveProperty('user_name');
    expect(list[0].secret).toBe('');
    expect(list[0].id).toBeGreaterThan(list[1].id);
    // The single task carries the same template and user fields.
    const one = (await members.guest.get(p(`/tasks/${list[0].id}`))).json();
    expect(one).toMatchObject({ id: list[0].id, tpl_alias: 'Deploy app', tpl_app: 'bash', build_task: null });
    expect(one.user_name).toBe(list[0].user_name);
    expect(one.secret).toBe('');
    const tooMany = await members.guest.get(p('/tasks/last?limit=5000'));
    expect(tooMany.statusCode).toBe(400);
    const byStatus = (await members.guest.get(p(`/templates/${tpl}/tasks?status=success`))).json();
    expect(byStatus.length).toBeGreaterThan(0);
    expect(byStatus.every((t: { status: string }) => t.status === 'success')).toBe(true);
    const badStatus = await members.guest.get(p(`/templates/${tpl}/tasks?status=bogus`));
    expect(badStatus.statusCode).toBe(400);
    expect(badStatus.json().error).toMatch(/^Status must be one of waiting, /);
  });

  it('pages the task lists newest first: every task once, in order, with its template fields', async () => {
    for (let i = 0; i < 3; i++)
      expect((await members.owner.post(p('/tasks'), { template_id: tpl })).statusCode).toBe(201);
    type Row = { id: number; tpl_alias: string; template_id: number };
    const view = (rows: Row[]) => rows.map((t) => ({ id: t.id, tpl_alias: t.tpl_alias }));
    const all = (await members.guest.get(p('/tasks'))).json() as Row[];
    expect(all.length).toBeGreaterThanOrEqual(3);
    const paged: Row[] = [];
    for (let offset = 0; offset < all.length; offset += 2) {
      const page = await members.guest.get(p(`/tasks?limit=2&offset=${offset}`));
      expect(page.statusCode).toBe(200);
      paged.push(...page.json());
    }
    expect(view(paged)).toEqual(view(all));
    expect(all.every((t) => t.tpl_alias !== '' && typeof t.tpl_alias === 'string')).toBe(true);
    expect(all.map((t) => t.id)).toEqual([...all.map((t) => t.id)].sort((x, y) => y - x));
    expect((await members.guest.get(p(`/tasks?offset=${all.length}`))).json()).toEqual([]);
    // The template's list pages the same way.
    const ofTemplate = view((await members.guest.get(p(`/templates/${tpl}/tasks`))).json());
    const second = view((await members.guest.get(p(`/templates/${tpl}/tasks?limit=1&offset=1`))).json());
    expect(second).toEqual(ofTemplate.slice(1, 2));
  });

  it('pages the task lists by keyset: a full page links the next one, the last page links none', async () => {
    for (let i = 0; i < 3; i++)
      expect((await members.owner.post(p('/tasks'), { template_id: tpl })).statusCode).toBe(201);
    type Row = { id: number };
    const all = ((await members.guest.get(p('/tasks'))).json() as Row[]).map((t) => t.id);
    expect(all.length).toBeGreaterThanOrEqual(4);
    const nextOf = (link: unknown) => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
    /** Follows the Link headers from `first` to the end; the pages' ids and how many pages. */
    async function follow(first: string) {
      const ids: number[] = [];
      let pages = 0;
      for (let url: string | undefined = first; url; pages++) {
        const page = await members.guest.get(url);
        expect(page.statusCode, page.body).toBe(200);
        ids.push(...(page.json() as Row[]).map((t) => t.id));
        url = nextOf(page.headers.link);
        if (url) expect(url).toMatch(/[?&]before=\d+/);
        expect(pages).toBeLessThan(all.length + 1);
      }
      return { ids, pages };
    }
    const paged = await follow(p('/tasks?limit=2'));
    expect(paged.ids).toEqual(all);
    // A page that is not full is the last: an exact multiple ends with one empty page.
    expect(paged.pages).toBe(Math.floor(all.length / 2) + 1);
    // The same list answered again (a shared answer) names the same next page.
    const again = await members.guest.get(p('/tasks?limit=2'));
    expect(nextOf(again.headers.link)).toBe(`${p('/tasks')}?limit=2&before=${all[1]}`);
    // A task started between two pages does not shift them: the cursor is an id, not a count.
    const first = await members.guest.get(p('/tasks?limit=2'));
    expect((await members.owner.post(p('/tasks'), { template_id: tpl })).statusCode).toBe(201);
    const second = await members.guest.get(String(nextOf(first.headers.link)));
    expect((second.json() as Row[]).map((t) => t.id)).toEqual(all.slice(2, 4));
    // The template's list, with its status filter kept in the link (every task finished first: a task that
    // succeeds between two pages would join the filtered list).
    const tasks = await h.deps.db
      .selectFrom('task')
      .select('id')
      .where('project_id', '=', projectId)
      .execute();
    for (const t of tasks) await waitForStatus(h.deps, t.id, ['success', 'error', 'stopped']);
    const ofTemplate = (
      (await members.guest.get(p(`/templates/${tpl}/tasks?status=success`))).json() as Row[]
    ).map((t) => t.id);
    const tplPaged = await follow(p(`/templates/${tpl}/tasks?status=success&limit=1`));
    expect(tplPaged.ids).toEqual(ofTemplate);
    // Both cursors at once, or a cursor that is not an id, are refused by name.
    const both = await members.guest.get(p('/tasks?offset=1&before=5'));
    expect(both.statusCode).toBe(400);
    expect(both.json()).toMatchObject({ code: 'offset_and_before' });
    for (const bad of ['0', '-1', 'abc', '1.5', '99999999999999999999'])
      expect((await members.guest.get(p(`/templates/${tpl}/tasks?before=${bad}`))).statusCode, bad).toBe(400);
  });

  it("answers Semaphore's fields: a task's limit and empty secret, an output row's task, a template's count", async () => {
    const secret = 'survey-s3cret-value';
    const res = await members.owner.post(p('/tasks'), {
      template_id: tpl,
      limit: 'web1, web2',
      secret: JSON.stringify({ password: secret }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as number;
    // The legacy limit text reads back as the hosts it was split into; the secret is never answered.
    expect(res.json()).toMatchObject({ limit: 'web1,web2', secret: '', params: { limit: ['web1', 'web2'] } });
    await waitForStatus(h.deps, id, ['success']);
    for (const url of [p(`/tasks/${id}`), p('/tasks'), p('/tasks/last'), p(`/templates/${tpl}/tasks`)]) {
      const body = (await members.guest.get(url)).body;
      expect(body, url).not.toContain(secret);
      const task = [JSON.parse(body)].flat().find((t: { id: number }) => t.id === id);
      expect(task, url).toMatchObject({ limit: 'web1,web2', secret: '' });
    }
    const seeded = (await members.guest.get(p(`/tasks/${finishedTask}`))).json();
    expect(seeded).toMatchObject({ limit: '', secret: '' });
    const output = (await members.guest.get(p(`/tasks/${finishedTask}/output`))).json();
    expect(output.length).toBeGreaterThan(0);
    for (const row of output) expect(row).toMatchObject({ task_id: finishedTask, task: '' });
    // A template counts its tasks (as Semaphore's `tasks`), in the list and alone.
    const count = Number(
      (
        await h.deps.db
          .selectFrom('task')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('template_id', '=', tpl)
          .executeTakeFirst()
      )?.n,
    );
    expect(count).toBeGreaterThan(1);
    const template = (await members.guest.get(p(`/templates/${tpl}`))).json();
    expect(template.tasks).toBe(count);
    expect(template.last_task).toMatchObject({ id, limit: 'web1,web2', secret: '' });
    const listed = (await members.guest.get(p('/templates'))).json();
    expect(listed.find((t: { id: number }) => t.id === tpl)?.tasks).toBe(count);
  });

  it('answers 404 for unknown ids and ids of another project', async () => {
    const other = (
      await outsider.post(`/api/project/${otherProject}/tasks`, { template_id: otherTpl })
    ).json().id;
    for (const url of [p('/tasks/999999'), p(`/tasks/${other}`), p(`/tasks/${other}/output`)]) {
      const res = await members.owner.get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ error: 'Task not found' });
    }
    expect((await members.owner.post(p(`/tasks/${other}/stop`), {})).statusCode).toBe(404);
    expect((await members.owner.get(p(`/templates/${otherTpl}/tasks`))).statusCode).toBe(404);
    expect((await members.owner.get(p('/tasks/abc'))).statusCode).toBe(400);
    await waitForStatus(h.deps, other, ['success']);
  });

  it('refuses bad input with 400 and creates nothing', async () => {
    const before = await countTasks();
    const cases: [unknown, string][] = [
      [{}, 'Template is required'],
      [{ template_id: 'x' }, 'Template must be a number'],
      [{ template_id: otherTpl }, `Template ${otherTpl} does not exist in this project`],
      [{ template_id: 99999 }, 'Template 99999 does not exist in this project'],
      [{ template_id: tpl, debug: 'yes' }, 'Debug must be true or false'],
      [{ template_id: tpl, message: 'x'.repeat(1024 * 1024) }, 'Message must be at most 500 characters'],
      [{ template_id: tpl, arguments: '{"a":1}' }, 'CLI args must be a JSON array'],
      [{ template_id: tpl, arguments: 'not json' }, 'CLI args must be a JSON array'],
      [{ template_id: tpl, environment: '[1]' }, 'Extra variables must be a JSON object'],
      [{ template_id: tpl, secret: 'nope' }, 'Secret variables must be a JSON object'],
      [{ template_id: tpl, limit: 5 }, 'Limit must be a string or a list of strings'],
      [{ template_id: tpl, params: [] }, 'Params must be an object'],
      [[], 'Request body must be a JSON object'],
    ];
    for (const [body, error] of cases) {
      const res = await members.owner.post(p('/tasks'), body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().error).toBe(error);
    }
    const malformed = await members.owner.request('POST', p('/tasks'), '{"template_id": ');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error).toBe('Request body is not valid JSON');
    const stop = await members.owner.post(p(`/tasks/${finishedTask}/stop`), { force: 'yes' });
    expect(stop.statusCode).toBe(400);
    expect(stop.json().error).toBe('Force must be true or false');
    expect(await countTasks()).toBe(before);
  });

  it('ignores overrides the template does not allow', async () => {
    const res = await members.owner.post(p('/tasks'), {
      template_id: tpl,
      git_branch: 'feature',
      inventory_id: 12345,
      limit: 'web1,web2',
      tags: ['a'],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      git_branch: null,
      inventory_id: null,
      params: { limit: ['web1', 'web2'], tags: ['a'] },
    });
    await waitForStatus(h.deps, res.json().id, ['success']);
  });
});
