import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { testDialects } from '../../test/support/dialects';
import { jobDetails, jobIn } from '../../test/support/fake-job';
import { fakeProcesses } from '../../test/support/fake-processes';
import { createHarness } from '../../test/support/harness';
import { runAnsible } from './executors/ansible';
import { createOutputWriter } from './output/output.store';
import type { JobDetails } from './run/job';
import { nextBuildVersion } from './run/version';
import { LineSplitter, MAX_LINE, type ProcessAdapter } from './sandbox/process';
import type { TaskRow, TemplateRow } from './store';

describe('nextBuildVersion', () => {
  it('counts the last numeric run up from the start version', () => {
    expect(nextBuildVersion('1.0.0', null)).toBe('1.0.0');
    expect(nextBuildVersion('1.0.0', '1.0.0')).toBe('1.0.1');
    expect(nextBuildVersion('1.0.0', '1.0.9')).toBe('1.0.10');
    expect(nextBuildVersion('1.0.5', '1.0.2')).toBe('1.0.5');
    expect(nextBuildVersion('v2-beta', 'v7-beta')).toBe('v8-beta');
    expect(nextBuildVersion('2.0.0', '1.0.7-rc')).toBe('2.0.0');
    expect(nextBuildVersion('release', 'release')).toBe('release');
  });
});

describe('LineSplitter', () => {
  it('splits LF and CRLF lines across chunks, keeps UTF-8 intact and splits over-long lines', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const euro = Buffer.from('€');
    s.push(Buffer.from('one\r\ntw'));
    s.push(Buffer.concat([Buffer.from('o '), euro.subarray(0, 1)]));
    s.push(Buffer.concat([euro.subarray(1), Buffer.from('\nthree')]));
    s.push(Buffer.from(`\n${'x'.repeat(MAX_LINE * 2 + 5)}\nlast`));
    s.end();
    expect(lines.map((l) => (l.length > 100 ? l.length : l))).toEqual([
      'one',
      'two €',
      'three',
      MAX_LINE,
      MAX_LINE,
      'xxxxx',
      'last',
    ]);
  });

  it('joins a long line that arrives in many small chunks, and a CRLF split between two chunks', () => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    const long = 'y'.repeat(MAX_LINE + 300_000);
    for (let i = 0; i < long.length; i += 4096) s.push(Buffer.from(long.slice(i, i + 4096)));
    s.push(Buffer.from('\r'));
    s.push(Buffer.from('\nafter\r'));
    s.push(Buffer.from('\n'));
    s.end();
    expect(lines.map((l) => (l.length > 100 ? l.length : l))).toEqual([MAX_LINE, 300_000, 'after']);
    expect(lines.slice(0, 2).join('')).toBe(long);
  });
});

function fakeJob(processes: ProcessAdapter, repoDir: string, home: string) {
  const task = {
    id: 7,
    project_id: 1,
    template_id: 3,
    message: '',
    debug: 1,
    dry_run: 1,
    diff: 1,
    arguments: '["--task-arg"]',
    playbook: '',
    commit_hash: 'abc',
    commit_message: 'msg',
    version: null,
  } as unknown as TaskRow;
  const template = {
    id: 3,
    type: '',
    app: 'ansible',
    playbook: 'site.yml',
    arguments: '["--forks", "5"]',
    allow_override_args_in_task: 0,
    vault_key_id: null,
  } as unknown as TemplateRow;
  const details = jobDetails({
    task,
    template,
    inventory: { id: 4, name: 'inv', type: 'static', inventory: 'localhost' } as JobDetails['inventory'],
    repository: { id: 2, name: 'repo' } as JobDetails['repository'],
    extraVars: { a: 1 },
    params: { tags: ['t1'], limit: ['ignored'] },
    templateParams: { allow_debug: true, allow_override_tags: true, limit: ['web'] },
  });
  const taskDir = mkdtempSync(join(tmpdir(), 'sb-unit-task-'));
  const { job, lines } = jobIn(details, processes, taskDir, home);
  job.repoDir = repoDir;
  return { job, lines, tmp: join(taskDir, 'tmp') };
}

describe('ansible executor (fake processes)', () => {
  it('builds the peer argument order and installs galaxy requirements only when they change', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'sb-unit-repo-'));
    const home = mkdtempSync(join(tmpdir(), 'sb-unit-home-'));
    writeFileSync(join(repo, 'requirements.yml'), 'collections: []\n');
    writeFileSync(join(repo, 'site.yml'), '- hosts: all\n');
    const processes = fakeProcesses();
    const first = fakeJob(processes, repo, home);
    await runAnsible(first.job, { inventoryRepository: async () => null, webRoot: 'http://sb' });
    const runs = processes.specs.map((s) => [s.command, ...s.args]);
    expect(runs).toEqual([
      ['ansible-galaxy', 'collection', 'install', '-r', join(repo, 'requirements.yml'), '--force'],
      ['ansible-galaxy', 'role', 'install', '-r', join(repo, 'requirements.yml'), '--force'],
      [
        'ansible-playbook',
        '-i',
        join(first.tmp, 'inventory_4'),
        '-vvvv',
        '--diff',
        '--check',
        '--extra-vars',
        `@${join(first.tmp, 'extra-vars.yml')}`,
        '--forks',
        '5',
        '--limit=web',
        '--tags=t1',
        '--',
        join(realpathSync(repo), 'site.yml'),
      ],
    ]);
    const extra = parseYaml(readFileSync(join(first.tmp, 'extra-vars.yml'), 'utf8'), { logLevel: 'error' });
    expect(extra).toMatchObject({ a: 1, semaphore_vars: { task_details: { id: 7, username: 'alice' } } });
    expect(processes.specs.at(-1)?.env).toMatchObject({ ANSIBLE_FORCE_COLOR: 'True', PYTHONUNBUFFERED: '1' });

    processes.specs.length = 0;
    const second = fakeJob(processes, repo, home);
    await runAnsible(second.job, { inventoryRepository: async () => null, webRoot: '' });
    expect(processes.specs.map((s) => s.command)).toEqual(['ansible-playbook']);
    expect(second.lines).toContain(
      'requirements.yml has not changed: skipping ansible-galaxy collection install',
    );

    writeFileSync(join(repo, 'requirements.yml'), 'collections: []\nroles: []\n');
    processes.specs.length = 0;
    await runAnsible(fakeJob(processes, repo, home).job, {
      inventoryRepository: async () => null,
      webRoot: '',
    });
    expect(processes.specs.map((s) => s.command)).toEqual([
      'ansible-galaxy',
      'ansible-galaxy',
      'ansible-playbook',
    ]);
  });
});

describe('the output writer', () => {
  it.each(testDialects())('stores batches of any size completely and in order on $name', async (dialect) => {
    const h = await createHarness(dialect);
    const writer = createOutputWriter(h.deps.db, h.deps.dialect, h.deps.config.dbUrl);
    try {
      const taskId = 987_654;
      const sizes = [1, 49, 50, 51, 137, 500, 3];
      let n = 0;
      for (const size of sizes) {
        const rows = Array.from({ length: size }, () => ({
          task_id: taskId,
          time: new Date().toISOString(),
          output: `row ${n++} "quoted" ✓`,
        }));
        await writer.write(rows);
      }
      const stored = await h.deps.db
        .selectFrom('task_output')
        .select('output')
        .where('task_id', '=', taskId)
        .orderBy('id')
        .execute();
      expect(stored.map((r) => r.output)).toEqual(Array.from({ length: n }, (_, i) => `row ${i} "quoted" ✓`));
    } finally {
      writer.close();
      await h.close();
    }
  });

  it('runs the registry’s ansible-playbook with its leading options, and the ansible-galaxy beside it', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'sb-unit-repo-'));
    const home = mkdtempSync(join(tmpdir(), 'sb-unit-home-'));
    const bin = mkdtempSync(join(tmpdir(), 'sb-unit-bin-'));
    writeFileSync(join(repo, 'requirements.yml'), 'collections: []\n');
    writeFileSync(join(repo, 'site.yml'), '- hosts: all\n');
    const processes = fakeProcesses();
    const tool = { path: join(bin, 'ansible-playbook'), args: ['--timeout', '30'] };
    // No ansible-galaxy beside the configured ansible-playbook: the one on PATH.
    await runAnsible(fakeJob(processes, repo, home).job, {
      inventoryRepository: async () => null,
      webRoot: '',
      tool,
    });
    expect(processes.specs.map((s) => s.command)).toEqual(['ansible-galaxy', 'ansible-galaxy', tool.path]);
    expect(processes.specs.at(-1)?.args.slice(0, 3)).toEqual(['--timeout', '30', '-i']);

    writeFileSync(join(bin, 'ansible-galaxy'), '');
    writeFileSync(join(repo, 'requirements.yml'), 'collections: []\nroles: []\n');
    processes.specs.length = 0;
    await runAnsible(fakeJob(processes, repo, home).job, {
      inventoryRepository: async () => null,
      webRoot: '',
      tool,
    });
    expect(processes.specs.map((s) => s.command)).toEqual([
      join(bin, 'ansible-galaxy'),
      join(bin, 'ansible-galaxy'),
      tool.path,
    ]);
  });
});
