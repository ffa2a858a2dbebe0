import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProjectRole } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  gitRepo,
  insertEnvironment,
  insertLocalInventory,
  insertRepository,
  insertTemplate,
} from '../../test/support/task-fixtures';
import { harnessWithProject, runTask } from '../../test/support/task-runs';
import { sharedTempDir } from '../../test/support/task-shared';

/** Jinja that would print PWNED (and create a marker file) if Ansible ever evaluated it. */
const payload = (marker: string) => `{{ lookup('pipe', 'touch ${marker}; echo PW$(true)NED') }}`;

describe.each(testDialects())('task-supplied extra vars reach Ansible as data on $name', (dialect) => {
  let h: Harness;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let template: number;
  let outDir: string;
  let marker: string;

  beforeAll(async () => {
    ({ h, projectId, members } = await harnessWithProject(dialect));
    // Where the playbook writes what it saw: shared with the tasks, which see nothing else of the test.
    outDir = sharedTempDir('sb-unsafe-');
    marker = join(outDir, 'evaluated');
    const repo = gitRepo({
      'site.yml': `- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "plain={{ plain }} survey={{ survey_secret | default('') }} nested={{ nested.list[0] }} key={{ nested.map | list | first }} message={{ semaphore_vars.task_details.message }} managed={{ managed }}"
    - copy:
        dest: "${join(outDir, 'seen.json')}"
        content: "{{ {'plain': plain, 'nested': nested, 'managed': managed, 'message': semaphore_vars.task_details.message, 'survey': survey_secret | default('')} | to_nice_json }}"
`,
    });
    const env = await insertEnvironment(h.deps, projectId, { json: { managed: '{{ 6 * 7 }}' } });
    template = await insertTemplate(h.deps, projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: await insertRepository(h.deps, projectId, { git_url: repo }),
      environment_id: env,
      inventory_id: await insertLocalInventory(h.deps, projectId),
      allow_parallel_tasks: 1,
    });
  });
  afterAll(async () => h?.close());

  const post = (role: ProjectRole, body: Record<string, unknown>) =>
    members[role].post(`/api/project/${projectId}/tasks`, { template_id: template, ...body });
  /** Runs the template as `role` (expects 201) until it succeeds or fails. */
  const run = (role: ProjectRole, body: Record<string, unknown>) =>
    runTask(
      h,
      members[role],
      projectId,
      { template_id: template, ...body },
      { statuses: ['success', 'error'] },
    );

  it('prints a Jinja payload from the environment, a secret survey value and the message literally', async () => {
    const jinja = payload(marker);
    const secretJinja = payload(`${marker}-secret`);
    const { done, out: lines } = await run('task_runner', {
      message: jinja,
      environment: JSON.stringify({ plain: jinja, nested: { list: [jinja], map: { [jinja]: jinja } } }),
      secret: JSON.stringify({ survey_secret: secretJinja }),
    });
    const out = lines.join('\n');
    expect(done.status, out).toBe('success');
    expect(out).toContain(`plain=${jinja} survey=********** nested=${jinja} key=${jinja} message=${jinja}`);
    // The environment's own JSON, written by a manager, is still a template.
    expect(out).toContain('managed=42');
    expect(out).not.toContain('PWNED');
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${marker}-secret`)).toBe(false);
    const seen = JSON.parse(readFileSync(join(outDir, 'seen.json'), 'utf8'));
    expect(seen).toEqual({
      plain: jinja,
      nested: { list: [jinja], map: { [jinja]: jinja } },
      managed: '42',
      message: jinja,
      survey: secretJinja,
    });
  });

  it('refuses ansible_* and semaphore_vars from a task runner (403 naming the field); managers may', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ environment: JSON.stringify({ ansible_ssh_common_args: '-o ProxyCommand=id' }) }, 'environment'],
      [{ environment: JSON.stringify({ ANSIBLE_CONNECTION: 'local' }) }, 'environment'],
      [{ environment: JSON.stringify({ semaphore_vars: { task_details: {} } }) }, 'environment'],
      [{ secret: JSON.stringify({ ansible_become_password: 'x' }) }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await post('task_runner', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(403);
      expect(res.json().fields).toEqual({ [field]: res.json().error });
      expect(res.json().error).toMatch(/^Variable "(ansible_|ANSIBLE_|semaphore_vars)/);
    }
    const managed = await run('manager', {
      message: 'by a manager',
      environment: JSON.stringify({
        plain: 'p',
        nested: { list: [1], map: { k: 1 } },
        ansible_python_interpreter: '/usr/bin/python3',
      }),
    });
    expect(managed.done.status, managed.out.join('\n')).toBe('success');
  });

  it('refuses values holding a NUL character with a 400 instead of failing the run', async () => {
    const res = await post('owner', { environment: JSON.stringify({ plain: 'a\u0000b' }) });
    expect(res.statusCode).toBe(400);
    expect(res.json().fields).toEqual({ environment: 'Extra variables must not contain NUL characters' });
  });
});
