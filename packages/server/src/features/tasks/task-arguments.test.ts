import type { ProjectRole } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { type HostileRepo, hostileRepo } from '../../../test/support/hostile-repo';
import {
  insertLocalInventory,
  insertRepository,
  insertTemplate,
  outputOf,
  waitForStatus,
} from '../../../test/support/task-fixtures';
import { disallowedArgument } from './task-args-allowlist';

describe('task arguments a caller without manageProjectResources may pass', () => {
  const allowed: Record<string, string[][]> = {
    ansible: [
      ['--limit', 'web,db', '-l', 'all:!db', '--limit=web'],
      ['--tags', 'a', '-t', 'b', '--tags=c', '--skip-tags', 'd', '--skip-tags=e'],
      ['--check', '-C', '--diff', '-D', '-v', '-vvv', '-vvvvvv', '--verbose'],
      ['--forks', '10', '-f', '2', '--forks=3', '--start-at-task', 'Install', '--start-at-task=-odd'],
      ['--list-hosts', '--list-tasks', '--list-tags', '--syntax-check', '--flush-cache', '--force-handlers'],
      ['-e', 'color=blue', '--extra-vars', '{"size": 3, "nested": {"ansible_x": 1}}', '--extra-vars=a=b'],
    ],
    terraform: [
      ['-var', 'region=eu', '-var=size=3', '-target=aws_instance.web', '-replace=aws_instance.web'],
      ['-refresh=false', '-refresh', '-parallelism=4', '-lock-timeout=30s', '-no-color', '-compact-warnings'],
    ],
    pulumi: [
      ['--target', 'urn:pulumi:dev::web::aws:s3/bucket:Bucket::b', '-t', 'urn:x', '--target=urn:y'],
      ['--refresh', '--refresh=false', '-r', '--parallel', '4', '-p', '2', '--parallel=8', '--diff'],
      ['--config', 'aws:region=eu-west-1', '-c', 'size=3', '--config=a=b'],
    ],
  };
  const refused: Record<string, Array<[string[], string]>> = {
    ansible: [
      [['-i', '/etc/passwd'], '-i'],
      [['--inventory=/etc/hosts'], '--inventory=/etc/hosts'],
      [['--vault-password-file', '/tmp/x'], '--vault-password-file'],
      [['--vault-id', 'a@/tmp/x'], '--vault-id'],
      [['-M', '/tmp/modules'], '-M'],
      [['--module-path=/tmp'], '--module-path=/tmp'],
      [['--private-key', '/root/.ssh/id_rsa'], '--private-key'],
      [['--ssh-common-args', '-o ProxyCommand=touch /tmp/x'], '--ssh-common-args'],
      [['-e', '@/etc/passwd'], '-e'],
      [['--extra-vars=@/etc/passwd'], '--extra-vars=@/etc/passwd'],
      [['-e', 'ansible_ssh_common_args=-oProxyCommand=x'], '-e'],
      [['-e', '{"ansible_connection": "local"}'], '-e'],
      [['-e', '{"semaphore_vars": {}}'], '-e'],
      [['-e', "x={{ lookup('pipe','id') }}"], '-e'],
      [['-e', 'a=b c=d'], '-e'],
      [['-e', '[1]'], '-e'],
      [['--limit', '@/etc/passwd'], '--limit'],
      [['--limit=@/etc/passwd'], '--limit=@/etc/passwd'],
      [['-l', '-i'], '-l'],
      [['-l=web'], '-l=web'],
      [['/etc/passwd'], '/etc/passwd'],
      [['other.yml'], 'other.yml'],
      [['--'], '--'],
      [['--forks', 'many'], '--forks'],
      [['-lweb'], '-lweb'],
      [['--check=yes'], '--check=yes'],
      [['--lim', 'web'], '--lim'],
    ],
    terraform: [
      [['-chdir=/etc'], '-chdir=/etc'],
      [['-var-file=/etc/passwd'], '-var-file=/etc/passwd'],
      [['-state=/tmp/x'], '-state=/tmp/x'],
      [['-var', '-chdir=/'], '-var'],
      [['-var', 'noequals'], '-var'],
      [['-target'], '-target'],
      [['-refresh', 'false'], 'false'],
      [['-refresh=maybe'], '-refresh=maybe'],
      [['--var=a=b'], '--var=a=b'],
      [['-out=/tmp/plan'], '-out=/tmp/plan'],
    ],
    pulumi: [
      [['--cwd', '/etc'], '--cwd'],
      [['--stack', 'prod'], '--stack'],
      [['--config-file', '/etc/passwd'], '--config-file'],
      [['-C', '/'], '-C'],
      [['--target', '--cwd=/'], '--target'],
      [['prod'], 'prod'],
    ],
  };

  for (const app of ['ansible', 'terraform', 'tofu', 'pulumi']) {
    const rules = app === 'tofu' ? 'terraform' : app;
    it(`${app}: accepts the harmless options in every form the tool parses`, () => {
      for (const args of allowed[rules]!) expect(disallowedArgument(app, args), args.join(' ')).toBeNull();
    });
    it(`${app}: refuses anything else, naming the argument`, () => {
      for (const [args, argument] of refused[rules]!)
        expect(disallowedArgument(app, args)?.argument, args.join(' ')).toBe(argument);
    });
  }

  it('bash takes any task argument: they are positional parameters after the script', () => {
    expect(disallowedArgument('bash', ['-c', '--rcfile', '/etc/passwd'])).toBeNull();
  });
});

describe.each(testDialects())('task arguments through the API on $name', (dialect) => {
  let h: Harness;
  let members: Record<ProjectRole, Client>;
  let projectId: number;
  let hostile: HostileRepo;
  let on: number;
  let off: number;

  beforeAll(async () => {
    h = await createHarness(dialect, { maxParallelTasks: 10 });
    const owner = await h.userClient({ can_create_project: true });
    ({ projectId, members } = await h.projectWithTeam(owner));
    hostile = hostileRepo(h.dataDir);
    const repo = await insertRepository(h.deps, projectId, { git_url: hostile.repo });
    const inventory = await insertLocalInventory(h.deps, projectId);
    const template = (allow: number) =>
      insertTemplate(h.deps, projectId, {
        app: 'ansible',
        playbook: 'site.yml',
        repository_id: repo,
        inventory_id: inventory,
        arguments: '["--ssh-extra-args", "-o Compression=no"]',
        allow_override_args_in_task: allow,
        allow_parallel_tasks: 1,
      });
    on = await template(1);
    off = await template(0);
  });
  afterAll(async () => h?.close());

  const post = (role: ProjectRole, template: number, args: string[]) =>
    members[role].post(`/api/project/${projectId}/tasks`, {
      template_id: template,
      arguments: JSON.stringify(args),
    });

  it('refuses a task runner an option outside the list with a 403 naming arguments; managers may', async () => {
    for (const args of [
      ['-i', '/etc/passwd'],
      ['-e', '@/etc/passwd'],
      ['--vault-password-file', '/x'],
    ]) {
      const res = await post('task_runner', on, args);
      expect(res.statusCode, args.join(' ')).toBe(403);
      expect(res.json()).toMatchObject({
        error: expect.stringContaining(args[0]!),
        fields: { arguments: res.json().error },
      });
    }
    for (const role of ['manager', 'owner'] as const) {
      const res = await post(role, on, ['--list-hosts', '-i', 'localhost,']);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().arguments).toBe('["--list-hosts","-i","localhost,"]');
    }
  });

  it("accepts a task runner's echo of the template's own arguments", async () => {
    const res = await post('task_runner', on, ['--ssh-extra-args', '-o Compression=no']);
    expect(res.statusCode, res.body).toBe(201);
  });

  it('keeps no arguments when the template does not allow them, whoever sends them', async () => {
    for (const role of ['task_runner', 'owner'] as const) {
      const res = await post(role, off, ['-i', '/etc/passwd']);
      expect(res.statusCode).toBe(201);
      expect(res.json().arguments).toBeNull();
    }
  });

  it('runs real ansible-playbook with the options a task runner may pass', async () => {
    const res = await post('task_runner', on, ['--limit', 'localhost', '-e', 'color=blue', '-D', '-v']);
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error']);
    const out = (await outputOf(h.deps, done.id)).join('\n');
    expect(done.status, out).toBe('success');
    expect(out).toContain('legit play');
    expect(hostile.ran()).toBe(false);
  });
});
