import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { appsNeedingPlaybook } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import { hostileProject } from '../../test/support/hostile-project';
import { type App, apps, type HostileRepo, playbookOf } from '../../test/support/hostile-repo';
import {
  commitFiles,
  insertInventory,
  insertTemplate,
  LOCAL_INVENTORY,
} from '../../test/support/task-fixtures';
import { runTask } from '../../test/support/task-runs';

/**
 * Templates saved before playbook paths were checked (written straight into the database here) and repositories
 * that commit links out of the checkout: the executors check the real path after checkout and run nothing.
 */
describe.each(testDialects())('executors keep every path inside the checkout on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let hostile: HostileRepo;
  let repoId: number;
  let inventoryId: number;
  let record: string;
  let close = async () => {};

  beforeAll(async () => {
    ({ h, owner, projectId, hostile, repoId, inventoryId, record, close } = await hostileProject(dialect));
    commitFiles(
      hostile.repo,
      {
        'show-args.sh': 'echo "script: $0"\necho "args: $*"\n',
        'show-args.py': 'import sys\nprint("script:", sys.argv[0])\nprint("args:", *sys.argv[1:])\n',
        'show-args.ps1': 'Write-Output "args: $args"\n',
        'hosts.ini': LOCAL_INVENTORY,
      },
      'args',
    );
  });
  afterAll(() => close());

  async function run(app: App, playbook: string, extra: Parameters<typeof insertTemplate>[2] = {}) {
    const before = readFileSync(record, 'utf8');
    const template = await insertTemplate(h.deps, projectId, {
      app,
      playbook,
      repository_id: repoId,
      inventory_id: app === 'ansible' ? inventoryId : null,
      allow_parallel_tasks: 1,
      ...extra,
    });
    const { done, out } = await runTask(h, owner, projectId, {
      template_id: template,
      environment: JSON.stringify({ x: `; touch ${hostile.marker}` }),
    });
    const text = out.join('\n');
    for (const secret of hostile.secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain('root:x:0:0');
    return { status: done.status, out, last: out.at(-1), ranTool: readFileSync(record, 'utf8') !== before };
  }

  const legacy = (app: App): Array<[string, RegExp]> => {
    const what = appsNeedingPlaybook.includes(app) ? 'Playbook' : 'Playbook directory';
    return [
      ['-c', /^Playbook filename must not start with "-": nothing was run$/],
      ['--version', /^Playbook filename must not start with "-": nothing was run$/],
      [
        '/etc/passwd',
        /^Playbook filename must be a path inside the repository, not an absolute path: nothing was run$/,
      ],
      ['../x', /^Playbook filename must not leave the repository with "\.\.": nothing was run$/],
      ['run.sh\n-c', /^Playbook filename must not contain control characters/],
      [playbookOf[app].link, new RegExp(`^${what} "${playbookOf[app].link}" leads outside the repository`)],
      ['key.yml', new RegExp(`^${what} "key.yml" leads outside the repository`)],
      ['missing', new RegExp(`^${what} "missing" does not exist in the repository: nothing was run$`)],
    ];
  };

  for (const app of apps) {
    it(`${app}: a stored bad playbook ends the task as error with a clear last line, running nothing`, async () => {
      for (const [playbook, message] of legacy(app)) {
        const r = await run(app, playbook);
        expect(r.status, JSON.stringify(playbook)).toBe('error');
        expect(r.last, JSON.stringify(playbook)).toMatch(message);
        expect(r.ranTool, JSON.stringify(playbook)).toBe(false);
      }
      expect(hostile.ran()).toBe(false);
    });
  }

  it('ansible reads a file inventory of the checkout by its real path, never one leading out of it', async () => {
    const fileInventory = (path: string) =>
      insertInventory(h.deps, projectId, { type: 'file', inventory: path });
    for (const [path, message] of [
      [
        'key.yml',
        /^Inventory file "key.yml" leads outside the repository \(a symbolic link\?\): nothing was run$/,
      ],
      ['evil.yml', /^Inventory file "evil.yml" leads outside the repository/],
      ['../x', /^Inventory file "..\/x" leads outside the repository/],
      ['missing.ini', /^Inventory file "missing.ini" does not exist in the repository: nothing was run$/],
    ] as const) {
      const r = await run('ansible', 'site.yml', { inventory_id: await fileInventory(path) });
      expect(r.status, path).toBe('error');
      expect(r.last, path).toMatch(message);
    }
    expect(hostile.ran()).toBe(false);
    const legit = await run('ansible', 'site.yml', { inventory_id: await fileInventory('hosts.ini') });
    expect(legit.status, legit.out.join('\n')).toBe('success');
    expect(legit.out.join('\n')).toContain('legit play');
  });

  it('terraform, tofu and terragrunt refuse a file where a directory belongs, and run in the checked directory', async () => {
    for (const app of ['terraform', 'tofu', 'terragrunt'] as const) {
      const file = await run(app, 'run.sh');
      expect(file.last).toBe(
        'Playbook directory "run.sh" is not a directory in the repository: nothing was run',
      );
      expect(file.ranTool).toBe(false);
      const root = await run(app, '');
      expect(root.status).toBe('success');
      expect(readFileSync(record, 'utf8')).toContain(`${app} [${realpathSync(hostile.repo)}] init`);
    }
  });

  it('bash runs the script by its real path after "--", with the task values as plain arguments', async () => {
    const r = await run('bash', 'show-args.sh');
    expect(r.status).toBe('success');
    expect(r.out).toContain(`script: ${join(realpathSync(hostile.repo), 'show-args.sh')}`);
    expect(r.out).toContain(`args: x=; touch ${hostile.marker}`);
    expect(hostile.ran()).toBe(false);
  });

  it('python and pwsh run the script by its real path, the task values after it as its arguments', async () => {
    const script = (name: string) => join(realpathSync(hostile.repo), name);
    const py = await run('python', 'show-args.py');
    expect(py.status).toBe('success');
    expect(py.out).toContain(`script: ${script('show-args.py')}`);
    expect(py.out).toContain(`args: x=; touch ${hostile.marker}`);
    const ps = await run('powershell', 'show-args.ps1');
    expect(ps.status).toBe('success');
    expect(readFileSync(record, 'utf8')).toContain(
      `-NoProfile -NonInteractive -File ${script('show-args.ps1')} x=; touch ${hostile.marker}`,
    );
    expect(hostile.ran()).toBe(false);
  });

  it('a terraform workspace or pulumi stack that would read as an option fails before anything runs', async () => {
    const workspace = await insertInventory(h.deps, projectId, {
      type: 'terraform-workspace',
      inventory: '-chdir=/etc',
    });
    const tf = await run('terraform', 'infra', { inventory_id: workspace });
    expect(tf.status).toBe('error');
    expect(tf.last).toMatch(/^Workspace name may contain only letters, digits/);
    expect(tf.ranTool).toBe(false);

    const stack = await run('pulumi', 'infra', { task_params: { stack: '--cwd=/etc' } });
    expect(stack.status).toBe('error');
    expect(stack.last).toMatch(/^Pulumi stack "--cwd=\/etc" is not a valid stack name/);
    expect(stack.ranTool).toBe(false);

    const named = await run('pulumi', 'infra', { task_params: { stack: 'acme/web/prod' } });
    expect(named.status).toBe('success');
    expect(readFileSync(record, 'utf8')).toContain('stack select --create --non-interactive acme/web/prod');
  });

  it('a task limit starting with "@" (a hosts file on the server) is refused when the task is created', async () => {
    const template = await insertTemplate(h.deps, projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: repoId,
      inventory_id: inventoryId,
      task_params: { allow_override_limit: true },
    });
    for (const body of [{ limit: '@/etc/passwd' }, { params: { limit: ['@/etc/passwd'] } }]) {
      const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: template, ...body });
      expect(res.statusCode).toBe(400);
      expect(res.json().fields).toEqual({ limit: 'A limit must not start with "@" (a file on the server)' });
    }
  });
});
