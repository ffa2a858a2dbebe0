import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appsNeedingPlaybook } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type HostileProject, hostileProject } from '../../test/support/hostile-project';
import { type App, apps, malformedPlaybooks, playbookOf } from '../../test/support/hostile-repo';
import { insertTemplate, outputOf, waitForStatus } from '../../test/support/task-fixtures';
import { ENDED } from '../../test/support/task-runs';

const roles = ['task_runner', 'manager', 'owner'] as const;

describe.each(testDialects())('changing the playbook of a task on $name', (dialect) => {
  let p: HostileProject;
  /** Template ids by app, with allow_override_args_in_task on and off. */
  const templates = {} as Record<App, { on: number; off: number }>;

  beforeAll(async () => {
    p = await hostileProject(dialect);
    for (const app of apps) {
      const tpl = (allow: boolean) =>
        insertTemplate(p.h.deps, p.projectId, {
          name: `${app}-${allow ? 'on' : 'off'}`,
          app,
          playbook: playbookOf[app].legit,
          repository_id: p.repoId,
          inventory_id: app === 'ansible' ? p.inventoryId : null,
          allow_override_args_in_task: allow ? 1 : 0,
          allow_parallel_tasks: 1,
        });
      templates[app] = { on: await tpl(true), off: await tpl(false) };
    }
  });
  afterAll(() => p?.close());

  const post = (role: (typeof roles)[number], template: number, playbook: string) =>
    p.members[role].post(`/api/project/${p.projectId}/tasks`, { template_id: template, playbook });
  const recorded = () => readFileSync(p.record, 'utf8');

  async function finished(id: number) {
    const done = await waitForStatus(p.h.deps, id, ENDED);
    const out = await outputOf(p.h.deps, id);
    for (const secret of p.hostile.secrets) expect(out.join('\n')).not.toContain(secret);
    expect(out.join('\n')).not.toContain('root:x:0:0');
    return { status: done.status, out, playbook: done.playbook };
  }

  for (const app of apps) {
    const { legit, other, link } = playbookOf[app];

    it(`${app}: a malformed playbook is a 400 naming playbook for every role, allowed or not`, async () => {
      for (const allow of ['on', 'off'] as const)
        for (const role of roles)
          for (const playbook of malformedPlaybooks) {
            const res = await post(role, templates[app][allow], playbook);
            expect(res.statusCode, `${role} ${allow} ${JSON.stringify(playbook)}`).toBe(400);
            expect(res.json().fields.playbook).toBe(res.json().error);
          }
      expect(p.hostile.ran()).toBe(false);
    });

    it(`${app}: another playbook needs the template's permission and manageProjectResources (403 naming playbook)`, async () => {
      const refused = [...roles.map((role) => [role, 'off'] as const), ['task_runner', 'on'] as const];
      for (const [role, allow] of refused)
        for (const playbook of [other, link]) {
          const res = await post(role, templates[app][allow], playbook);
          expect(res.statusCode, `${role} ${allow} ${playbook}`).toBe(403);
          expect(res.json()).toMatchObject({
            error: expect.any(String),
            fields: { playbook: res.json().error },
          });
        }
      const guest = await p.members.guest.post(`/api/project/${p.projectId}/tasks`, {
        template_id: templates[app].on,
        playbook: other,
      });
      expect(guest.statusCode).toBe(403);
    });

    it(`${app}: a manager's or owner's link out of the checkout is caught when the task runs`, async () => {
      for (const role of ['manager', 'owner'] as const) {
        const before = recorded();
        const res = await post(role, templates[app].on, link);
        expect(res.statusCode, res.body).toBe(201);
        const run = await finished(res.json().id);
        expect(run.status).toBe('error');
        expect(run.out.at(-1)).toBe(
          `${appsNeedingPlaybook.includes(app) ? 'Playbook' : 'Playbook directory'} "${link}" leads outside the repository (a symbolic link?): nothing was run`,
        );
        expect(recorded()).toBe(before);
      }
      expect(p.hostile.ran()).toBe(false);
    });

    it(`${app}: echoing the template's playbook runs for a task runner; a manager's override runs`, async () => {
      for (const [role, allow, playbook, expected] of [
        ['task_runner', 'off', legit, legit],
        ['task_runner', 'on', '', legit],
        ['manager', 'on', other, other],
      ] as const) {
        const res = await post(role, templates[app][allow], playbook);
        expect(res.statusCode, res.body).toBe(201);
        const run = await finished(res.json().id);
        expect(run.status, run.out.join('\n')).toBe('success');
        // An echo is no override: the task keeps no playbook of its own.
        expect(run.playbook).toBe(playbook === legit ? '' : playbook);
        if (app === 'bash' || app === 'python')
          expect(run.out.map((l) => l.trimEnd())).toContain(
            `${expected === legit ? 'legit run' : 'other script'}:`,
          );
        if (app === 'ansible')
          expect(run.out.join('\n')).toContain(expected === legit ? 'legit play' : 'other play');
        // The pwsh stand-in runs in the checkout and records the script it was given.
        if (app === 'powershell')
          expect(recorded()).toContain(
            `pwsh [${p.hostile.repo}] -NoProfile -NonInteractive -File ${join(p.hostile.repo, expected)}`,
          );
        if (!appsNeedingPlaybook.includes(app))
          expect(recorded()).toContain(`${app} [${join(p.hostile.repo, expected)}]`);
      }
      expect(p.hostile.ran()).toBe(false);
    });
  }

  it('a task runner re-runs a manager override; the path is checked again when the re-run runs', async () => {
    const good = await post('manager', templates.bash.on, 'other.sh');
    expect((await finished(good.json().id)).status).toBe('success');
    const again = await p.members.task_runner.post(
      `/api/project/${p.projectId}/tasks/${good.json().id}/rerun`,
      {},
    );
    expect(again.statusCode, again.body).toBe(201);
    const rerun = await finished(again.json().id);
    expect(rerun).toMatchObject({ status: 'success', playbook: 'other.sh' });
    expect(rerun.out).toContain('other script: ');

    const bad = await post('owner', templates.bash.on, 'evil.sh');
    expect((await finished(bad.json().id)).status).toBe('error');
    const badAgain = await p.members.task_runner.post(
      `/api/project/${p.projectId}/tasks/${bad.json().id}/rerun`,
      {},
    );
    expect(badAgain.statusCode).toBe(201);
    const badRerun = await finished(badAgain.json().id);
    expect(badRerun.status).toBe('error');
    expect(badRerun.out.at(-1)).toMatch(/leads outside the repository/);
    expect(p.hostile.ran()).toBe(false);
  });
});
