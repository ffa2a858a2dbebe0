import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { jobDetails } from '../../../test/support/fake-job';
import { FakeRunnerServer } from '../../../test/support/fake-runner-server';
import { serverBin } from '../../../test/support/server-process';
import { alive, commitFiles, standIn, waitFor } from '../../../test/support/task-fixtures';
import { hostPidsOf } from '../../../test/support/task-pids';
import { taskSharedEnv } from '../../../test/support/task-shared';
import { runnerClose, runnerProtocol } from '../../runner-protocol/protocol';
import { generateRunnerKeys } from '../../runner-protocol/seal';
import type { JobDetails, Key } from '../../tasks/run/job';
import type { RepositoryRow } from '../../tasks/store';
import type { JobPayload } from '../payload';
import { saveRunner } from './files';

const bin = serverBin;
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

/** The parent's environment without any Signalbox/Semaphore settings, plus the given ones. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

type Proc = { child: ChildProcess; out: { text: string }; exited: Promise<number | null> };

function runner(args: string[], env: Record<string, string> = {}): Proc {
  // Its tasks see the test's shared directory (stand-in tools), as an admin's tools directory.
  const child = spawn(process.execPath, [bin, 'runner', ...args], {
    cwd: repoRoot,
    env: cleanEnv({ ...taskSharedEnv, ...env }),
  });
  const out = { text: '' };
  child.stdout?.on('data', (d) => {
    out.text += d;
  });
  child.stderr?.on('data', (d) => {
    out.text += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, out, exited };
}

async function runToEnd(args: string[], env: Record<string, string> = {}) {
  const p = runner(args, env);
  const code = await p.exited;
  return { code, output: p.out.text };
}

let server: FakeRunnerServer;
const started: Proc[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'sb-runner-client-'));
let repoDir: string;

/** A registered runner folder of its own. */
async function registered(extra: string[] = []) {
  const dir = mkdtempSync(join(scratch, 'runner-'));
  const reg = await runToEnd(
    ['register', '--url', server.url, '--dir', dir, '--max-parallel', '4', '--name', 'box', ...extra],
    { SIGNALBOX_RUNNER_REGISTRATION_TOKEN: 'reg-token' },
  );
  expect(reg.code, reg.output).toBe(0);
  return dir;
}

/** A runner folder registered without the command (quicker): its files and the server's record of it. */
function prepared() {
  const dir = mkdtempSync(join(scratch, 'runner-'));
  const keys = generateRunnerKeys();
  const id = server.tokens.size + 100;
  const token = `runner-token-direct-${id}`;
  server.tokens.set(token, { id, publicKey: keys.publicKey });
  saveRunner(dir, { url: server.url, id, token, tags: [], max_parallel: 4 }, keys.privateKey);
  return dir;
}

async function startRunner(dir: string, env: Record<string, string> = {}) {
  const connections = server.connections;
  const p = runner(['start', '--dir', dir], env);
  started.push(p);
  await waitFor(
    async () => server.connections > connections && server.socket,
    // The runner compiles its sources through tsx first: half a minute on a busy 2-core machine.
    90_000,
    'the runner to connect',
  );
  // The welcome has gone out once the hello is in.
  await waitFor(async () => server.hellos.length >= connections + 1, 10_000, 'the hello');
  return p;
}

let nextTaskId = 100;

function bashJob(
  script: string,
  opts: Partial<JobDetails> & { keys?: Record<string, Key> } = {},
): JobPayload {
  const id = nextTaskId++;
  const repository = {
    id: 2,
    name: 'scripts',
    project_id: 1,
    git_url: `file://${repoDir}`,
    git_branch: 'main',
    ssh_key_id: opts.keys ? Number(Object.keys(opts.keys)[0]) : null,
  } as RepositoryRow;
  const details = jobDetails({
    task: {
      id,
      project_id: 1,
      template_id: 3,
      commit_hash: null,
      arguments: null,
      environment: null,
      message: '',
    },
    template: {
      id: 3,
      name: 'remote',
      type: '',
      app: 'bash',
      playbook: script,
      arguments: null,
      allow_override_args_in_task: 0,
      survey_vars: JSON.stringify([{ name: 'SURVEY_PIN', type: 'secret' }]),
      git_branch: null,
    },
    project: { id: 1, name: 'p' },
    repository,
    ...opts,
  } as unknown as Parameters<typeof jobDetails>[0]);
  return { details, keys: opts.keys ?? {}, inventory_repository: null };
}

const taskIdOf = (p: JobPayload) => p.details.task.id;

/** Every process whose environment says it belongs to task `id`. */
function processesOfTask(id: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (env.includes(`SIGNALBOX_TASK_ID=${id}`) && alive(Number(entry))) pids.push(Number(entry));
    } catch {
      // gone or not ours
    }
  }
  return pids;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

beforeAll(async () => {
  server = await new FakeRunnerServer().start();
  repoDir = join(scratch, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repoDir]);
  commitFiles(
    repoDir,
    {
      'hello.sh': 'echo "hello one"\necho "hello two"\necho "pin=$SURVEY_PIN env=$API_TOKEN"\n',
      'many.sh':
        'for c in $(seq 0 39); do seq $((c*500+1)) $((c*500+500)) | sed "s/^/line /"; sleep 0.02; done\necho all printed\n',
      'sleep.sh': 'bash -c "sleep 600" &\necho "child $!"\necho "main $$"\nsleep 600\n',
      'secret.sh':
        'echo "pin=$SURVEY_PIN env=$API_TOKEN"\nfor i in $(seq 1 30); do sleep 0.05; done\necho finished\n',
      'outputs.sh': 'printf \'{"version": "3.1", "files": ["x.tgz"]}\' > "$SIGNALBOX_OUTPUTS"\n',
      'slow.sh': 'echo started\nfor i in $(seq 1 30); do sleep 0.1; done\necho finished\n',
    },
    'scripts',
  );
}, 60_000);

afterEach(async () => {
  for (const p of started.splice(0)) {
    if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  server.ack = true;
  server.lose = false;
  server.abandon.clear();
  server.onOutput = null;
  server.refuseHello = null;
  server.welcomeProtocol = runnerProtocol;
  server.keepsOutputs = true;
});

afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('signalbox runner register / unregister', () => {
  it('stores 0600 settings and key, sends the public key, refuses a second registration', async () => {
    const before = server.registrations.length;
    const dir = await registered(['--tag', 'linux', '--tag', 'eu']);
    const sent = server.registrations[before] as Record<string, unknown>;
    expect(sent).toMatchObject({
      registration_token: 'reg-token',
      name: 'box',
      tags: ['linux', 'eu'],
      max_parallel_tasks: 4,
    });
    expect(String(sent.public_key)).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of ['runner.json', 'runner.key']) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    const settings = JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8'));
    expect(settings).toMatchObject({
      url: server.url,
      id: expect.any(Number),
      tags: ['linux', 'eu'],
      max_parallel: 4,
    });
    expect(server.tokens.has(settings.token)).toBe(true);
    expect(readFileSync(join(dir, 'runner.key'), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);

    const again = await runToEnd([
      'register',
      '--url',
      server.url,
      '--dir',
      dir,
      '--registration-token',
      'reg-token',
    ]);
    expect(again.code).toBe(1);
    expect(again.output).toContain('already holds runner');
    expect(again.output).not.toContain(settings.token);
  }, 120_000);

  it('says why a registration is refused and stores nothing', async () => {
    const dir = join(scratch, 'refused');
    const bad = await runToEnd([
      'register',
      '--url',
      server.url,
      '--dir',
      dir,
      '--registration-token',
      'wrong',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.output).toContain('The server refused the registration token: Invalid registration token');
    expect(existsSync(join(dir, 'runner.json'))).toBe(false);
    const down = await runToEnd(['register', '--url', 'http://127.0.0.1:1', '--dir', dir], {
      SIGNALBOX_RUNNER_REGISTRATION_TOKEN: 'reg-token',
    });
    expect(down.code).toBe(1);
    expect(down.output).toContain('Cannot reach the server at http://127.0.0.1:1');
  }, 120_000);

  it('takes a registration token that starts with a dash as --registration-token=…', async () => {
    const dir = join(scratch, 'dash-token');
    const res = await runToEnd([
      'register',
      '--url',
      server.url,
      '--dir',
      dir,
      '--registration-token=-dash-reg-token',
    ]);
    expect(res.code, res.output).toBe(0);
    expect(server.registrations.at(-1)).toMatchObject({ registration_token: '-dash-reg-token' });
    expect(res.output).not.toContain('-dash-reg-token');
  }, 120_000);

  it('unregisters with its own token and removes its files', async () => {
    const dir = await registered();
    const { token } = JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8'));
    const res = await runToEnd(['unregister', '--dir', dir]);
    expect(res.code, res.output).toBe(0);
    expect(server.unregistrations.at(-1)).toBe(token);
    expect(server.tokens.has(token)).toBe(false);
    expect(existsSync(join(dir, 'runner.json'))).toBe(false);
    expect(existsSync(join(dir, 'runner.key'))).toBe(false);
    expect(res.output).not.toContain(token);
  }, 120_000);
});

describe('signalbox runner start', () => {
  it('runs a bash job: numbered batches in order, running with the commit, finished success', async () => {
    const dir = prepared();
    await startRunner(dir);
    const job = bashJob('hello.sh');
    const id = taskIdOf(job);
    server.sendJob(id, job);
    const t = server.task(id);
    await waitFor(async () => t.finished && t.seq >= t.finished.last_seq, 30_000, 'the task to finish');
    expect(t.finished).toMatchObject({ status: 'success' });
    expect(t.received).toEqual(t.received.map((_, i) => i + 1));
    expect(t.lines).toContain('hello one');
    expect(t.lines.indexOf('hello two')).toBe(t.lines.indexOf('hello one') + 1);
    const head = execFileSync('git', ['-C', repoDir, 'rev-parse', 'HEAD']).toString().trim();
    expect(t.statuses.map((s) => s.status)).toEqual(['running']);
    expect(t.statuses[0]).toMatchObject({ commit_hash: head, commit_message: 'scripts' });
    expect(server.protocolErrors).toEqual([]);
    // Done: nothing of the task is left in the work folder.
    await waitFor(
      async () => !existsSync(join(dir, 'work', 'tasks', String(id))),
      5000,
      'the task folder to go',
    );
  }, 120_000);

  it("sends a task's outputs with finished to a server that keeps them, and to no other", async () => {
    const dir = prepared();
    await startRunner(dir);
    const run = async () => {
      const job = bashJob('outputs.sh');
      const id = taskIdOf(job);
      server.sendJob(id, job);
      const t = server.task(id);
      await waitFor(async () => t.finished && t.seq >= t.finished.last_seq, 30_000, 'the task to finish');
      return t.finished;
    };
    expect(await run()).toMatchObject({ status: 'success', outputs: { version: '3.1', files: ['x.tgz'] } });
    // An older server's welcome says nothing of outputs: a finished message with them would be refused.
    server.keepsOutputs = false;
    const hellos = server.hellos.length;
    server.drop();
    // The welcome has gone out once the hello of the new connection is in.
    await waitFor(async () => server.hellos.length > hellos, 30_000, 'a reconnect');
    const finished = await run();
    expect(finished).toMatchObject({ status: 'success' });
    expect(finished).not.toHaveProperty('outputs');
    expect(server.protocolErrors).toEqual([]);
  }, 120_000);

  it('delivers every line exactly once, in order, across a dropped connection', async () => {
    const dir = prepared();
    await startRunner(dir);
    const job = bashJob('many.sh');
    const id = taskIdOf(job);
    const t = server.task(id);
    // Acks are withheld (as if lost); once output is flowing, a few batches are lost in flight and then the
    // socket drops: the stored ones must not come again, the lost ones must.
    server.ack = false;
    let lost = 0;
    let dropped = false;
    server.onOutput = (taskId) => {
      if (dropped || taskId !== id) return;
      if (!server.lose && t.lines.some((l) => l.startsWith('line ')) && t.seq >= 3) server.lose = true;
      else if (server.lose && ++lost >= 3) {
        dropped = true;
        server.lose = false;
        server.ack = true;
        server.drop();
      }
    };
    server.sendJob(id, job);
    await waitFor(async () => t.finished && t.seq >= t.finished.last_seq, 60_000, 'the task to finish');
    expect(dropped).toBe(true);
    expect(server.connections).toBeGreaterThanOrEqual(2);
    expect(t.finished?.status).toBe('success');
    // The batches lost in flight came again after the reconnect.
    expect(new Set(t.received).size).toBeLessThan(t.received.length);
    const numbered = t.lines.filter((l) => l.startsWith('line ')).map((l) => Number(l.slice(5)));
    expect(numbered.length).toBe(20_000);
    expect(numbered).toEqual(Array.from({ length: 20_000 }, (_, i) => i + 1));
    expect(t.lines.at(-1)).toBe('all printed');
    expect(server.protocolErrors).toEqual([]);
  }, 120_000);

  it('stop ends a sleeping script and its children within 2 s', async () => {
    const dir = prepared();
    await startRunner(dir);
    const job = bashJob('sleep.sh');
    const id = taskIdOf(job);
    const t = server.task(id);
    server.sendJob(id, job);
    await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
    // The pids the script printed are those of its PID namespace when it runs confined.
    const pids = await waitFor(async () => hostPidsOf(id, t.lines, ['child ', 'main ']), 10_000, 'the pids');
    expect(pids.every(alive)).toBe(true);
    const began = Date.now();
    server.control(id, 'stop');
    await waitFor(async () => pids.every((p) => !alive(p)), 2000, 'the processes to end');
    expect(Date.now() - began).toBeLessThan(2000);
    await waitFor(async () => t.finished, 5000, 'finished');
    expect(t.finished?.status).toBe('stopped');
    expect(processesOfTask(id)).toEqual([]);
  }, 120_000);

  it('keeps payload secrets out of argv, its own log and leftover files, and masks them in output', async () => {
    const dir = prepared();
    const proc = await startRunner(dir);
    const envSecret = 'env-secret-Zq81xv';
    const surveySecret = 'survey-secret-Pw47ky';
    const keyPassword = 'key-password-Mn52rt';
    const job = bashJob('secret.sh', {
      secretEnv: { API_TOKEN: envSecret },
      surveySecrets: { SURVEY_PIN: surveySecret },
      keys: {
        '9': {
          id: 9,
          type: 'login_password',
          login: 'git',
          password: keyPassword,
          passphrase: '',
          private_key: '',
        },
      },
    } as never);
    const id = taskIdOf(job);
    const t = server.task(id);
    const secrets = [envSecret, surveySecret, keyPassword];
    const seenInArgv: string[] = [];
    let scanning = true;
    const scan = (async () => {
      while (scanning) {
        for (const entry of readdirSync('/proc')) {
          if (!/^\d+$/.test(entry)) continue;
          try {
            const cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
            for (const s of secrets) if (cmd.includes(s)) seenInArgv.push(cmd);
          } catch {
            // gone
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    server.sendJob(id, job);
    await waitFor(async () => t.lines.some((l) => l.startsWith('pin=')), 30_000, 'the script to run');
    // The task's temp files exist while it runs; after it, nothing in the runner folder holds a secret.
    await waitFor(async () => t.finished && t.seq >= t.finished.last_seq, 30_000, 'the task to finish');
    scanning = false;
    await scan;
    expect(t.finished?.status).toBe('success');
    expect(t.lines).toContain('pin=********** env=**********');
    expect(seenInArgv).toEqual([]);
    for (const s of secrets) {
      expect(t.lines.join('\n')).not.toContain(s);
      expect(proc.out.text).not.toContain(s);
    }
    await waitFor(
      async () => !existsSync(join(dir, 'work', 'tasks', String(id))),
      5000,
      'the task folder to go',
    );
    for (const file of filesUnder(dir)) {
      const content = readFileSync(file, 'latin1');
      for (const s of secrets) expect(content.includes(s), `${file} holds a secret`).toBe(false);
    }
  }, 120_000);

  it('runs terraform through its own SIGNALBOX_APPS and answers plan confirmations', async () => {
    const tools = mkdtempSync(join(scratch, 'tools-'));
    const tf = standIn(
      tools,
      'tf-stand-in',
      [
        '#!/bin/bash',
        'case "$1" in',
        // The saved plan is the last argument, -out=<file>.
        '  plan) echo "Plan: 1 to add"; p="$' + '{@: -1}"; echo plan > "$' + '{p#-out=}" ;;',
        '  apply) echo "Apply complete!" ;;',
        '  *) echo "$1 ok" ;;',
        'esac',
        '',
      ].join('\n'),
    );
    const dir = prepared();
    await startRunner(dir, { SIGNALBOX_APPS: JSON.stringify({ terraform: { path: tf } }) });
    const tfJob = () => {
      const job = bashJob('', {});
      Object.assign(job.details.template, { app: 'terraform', playbook: '' });
      return job;
    };
    const confirmed = tfJob();
    const rejected = tfJob();
    for (const [job, action] of [
      [confirmed, 'confirm'],
      [rejected, 'reject'],
    ] as const) {
      const id = taskIdOf(job);
      const t = server.task(id);
      server.sendJob(id, job);
      await waitFor(
        async () => t.statuses.some((s) => s.status === 'waiting_confirmation') || t.finished,
        30_000,
        'the plan to wait for confirmation',
      );
      expect(t.finished, t.lines.join('\n')).toBeNull();
      server.control(id, action);
      await waitFor(async () => t.finished && t.seq >= t.finished.last_seq, 30_000, 'the task to finish');
    }
    const c = server.task(taskIdOf(confirmed));
    expect(c.statuses.map((s) => s.status)).toEqual([
      'running',
      'waiting_confirmation',
      'confirmed',
      'running',
    ]);
    expect(c.lines).toContain('Plan: 1 to add');
    expect(c.lines).toContain('Apply complete!');
    expect(c.finished?.status).toBe('success');
    const r = server.task(taskIdOf(rejected));
    // Never through `rejected` (a finished status) on the way: the run ends once, as an error saying why.
    expect(r.statuses.map((s) => s.status)).toEqual(['running', 'waiting_confirmation']);
    expect(r.lines).not.toContain('Apply complete!');
    expect(r.lines).toContain('The plan was rejected');
    expect(r.finished?.status).toBe('error');
  }, 120_000);

  it('refuses a job sealed to another key', async () => {
    const dir = prepared();
    await startRunner(dir);
    const job = bashJob('hello.sh');
    const id = taskIdOf(job);
    server.sendJob(id, job, generateRunnerKeys().publicKey);
    const t = server.task(id);
    await waitFor(async () => t.refused, 10_000, 'the refusal');
    expect(t.refused).toContain('Cannot decrypt');
    expect(t.lines).toEqual([]);
    expect(t.finished).toBeNull();
  }, 120_000);

  it.each(['auto', 'off'] as const)(
    'with SIGNALBOX_TASK_SANDBOX=%s, what a crashed runner process left is killed and removed at its restart',
    async (sandbox) => {
      const dir = prepared();
      const env = { SIGNALBOX_TASK_SANDBOX: sandbox };
      const first = await startRunner(dir, env);
      const job = bashJob('sleep.sh');
      const id = taskIdOf(job);
      const t = server.task(id);
      server.sendJob(id, job);
      await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
      // The pids the script printed are those of its PID namespace when it runs confined.
      const pids = await waitFor(
        async () => hostPidsOf(id, t.lines, ['child ', 'main ']),
        10_000,
        'the pids',
      );
      first.child.kill('SIGKILL');
      await first.exited;
      // The crash leaves the task's folder behind. A sandbox ends with the runner that started it; unconfined,
      // the processes outlive the crash.
      if (sandbox === 'auto')
        await waitFor(async () => pids.every((p) => !alive(p)), 5000, 'the sandbox to end with the runner');
      else expect(pids.every(alive)).toBe(true);
      expect(existsSync(join(dir, 'work', 'tasks', String(id)))).toBe(true);
      const hellos = server.hellos.length;
      await startRunner(dir, env);
      await waitFor(async () => pids.every((p) => !alive(p)), 5000, 'the leftovers to be killed');
      expect(existsSync(join(dir, 'work', 'tasks', String(id)))).toBe(false);
      const firstHello = server.hellos[hellos - 1];
      const newHello = server.hellos.at(-1);
      expect(newHello?.running).toEqual([]);
      expect(Date.parse(newHello?.started_at ?? '')).toBeGreaterThan(
        Date.parse(firstHello?.started_at ?? ''),
      );
    },
    120_000,
  );

  it('kills a task the server abandoned while it was disconnected and sends nothing more of it', async () => {
    const dir = prepared();
    await startRunner(dir);
    const job = bashJob('sleep.sh');
    const id = taskIdOf(job);
    const t = server.task(id);
    server.sendJob(id, job);
    await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
    // The pids the script printed are those of its PID namespace when it runs confined.
    const pids = await waitFor(async () => hostPidsOf(id, t.lines, ['child ', 'main ']), 10_000, 'the pids');
    const hellos = server.hellos.length;
    server.abandon.add(id);
    server.drop();
    await waitFor(async () => server.hellos.length > hellos, 30_000, 'the reconnect');
    expect(server.hellos.at(-1)?.running.map((r) => r.task_id)).toEqual([id]);
    await waitFor(async () => pids.every((p) => !alive(p)), 5000, 'the abandoned task to be killed');
    // A heartbeat after the kill no longer names it, and nothing of it came after the welcome.
    const beats = server.heartbeats.length;
    const received = t.received.length;
    await waitFor(async () => server.heartbeats.length > beats + 1, 10_000, 'heartbeats');
    expect(server.heartbeats.at(-1)?.running).toEqual([]);
    expect(t.finished).toBeNull();
    expect(t.received.length).toBe(received);
    expect(existsSync(join(dir, 'work', 'tasks', String(id)))).toBe(false);
  }, 120_000);

  it('on SIGINT stops its tasks, reports them stopped and exits', async () => {
    const dir = prepared();
    const proc = await startRunner(dir);
    const job = bashJob('sleep.sh');
    const id = taskIdOf(job);
    const t = server.task(id);
    server.sendJob(id, job);
    await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
    proc.child.kill('SIGINT');
    expect(await proc.exited).toBe(0);
    expect(t.finished?.status).toBe('stopped');
    expect(processesOfTask(id)).toEqual([]);
  }, 120_000);

  it('on SIGTERM drains: says so, takes no new job, lets its task finish, then exits', async () => {
    const dir = prepared();
    const proc = await startRunner(dir, { SIGNALBOX_RUNNER_DRAIN_TIMEOUT: '120' });
    const job = bashJob('slow.sh');
    const id = taskIdOf(job);
    const t = server.task(id);
    server.sendJob(id, job);
    await waitFor(async () => t.lines.includes('started'), 30_000, 'the script to start');
    const drains = server.drains;
    proc.child.kill('SIGTERM');
    await waitFor(async () => server.drains > drains, 10_000, 'the drain message');
    const late = bashJob('hello.sh');
    server.sendJob(taskIdOf(late), late);
    await waitFor(async () => server.task(taskIdOf(late)).refused, 10_000, 'the late job to be refused');
    expect(server.task(taskIdOf(late)).refused).toBe('The runner is shutting down');
    expect(await proc.exited).toBe(0);
    expect(t.finished?.status).toBe('success');
    expect(t.lines).toContain('finished');
    expect(proc.out.text).toContain('Draining: no new tasks');
  }, 120_000);

  it('stops the drained tasks at a second SIGTERM, or when the drain timeout is over', async () => {
    for (const how of ['second signal', 'timeout'] as const) {
      const dir = prepared();
      const proc = await startRunner(dir, {
        SIGNALBOX_RUNNER_DRAIN_TIMEOUT: how === 'timeout' ? '1' : '600',
      });
      const job = bashJob('sleep.sh');
      const id = taskIdOf(job);
      const t = server.task(id);
      server.sendJob(id, job);
      await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
      const drains = server.drains;
      proc.child.kill('SIGTERM');
      await waitFor(async () => server.drains > drains, 10_000, 'the drain message');
      if (how === 'second signal') proc.child.kill('SIGTERM');
      expect(await proc.exited).toBe(0);
      expect(t.finished?.status, how).toBe('stopped');
      expect(processesOfTask(id)).toEqual([]);
      expect(proc.out.text).toContain(
        how === 'timeout' ? 'The drain timeout is over' : 'Stopping the running tasks now',
      );
    }
  }, 120_000);

  it('killed with SIGKILL: its sandboxed task dies with it; an unsandboxed one runs on until it starts again', async () => {
    for (const sandbox of ['bwrap', 'off'] as const) {
      const dir = prepared();
      const env = { SIGNALBOX_TASK_SANDBOX: sandbox };
      const proc = await startRunner(dir, env);
      expect(server.hellos.at(-1)?.sandbox?.mode, sandbox).toBe(sandbox);
      const job = bashJob('sleep.sh');
      const id = taskIdOf(job);
      const t = server.task(id);
      server.sendJob(id, job);
      await waitFor(async () => t.lines.some((l) => l.startsWith('main ')), 30_000, 'the script to start');
      await waitFor(async () => processesOfTask(id).length >= 2, 10_000, 'the task processes');
      proc.child.kill('SIGKILL');
      await proc.exited;
      if (sandbox === 'bwrap') {
        // --die-with-parent: the sandbox's PID namespace ends with the runner, and every process in it.
        await waitFor(async () => processesOfTask(id).length === 0, 5000, 'the sandboxed task to die');
        continue;
      }
      // No sandbox: nothing ties them to the runner; they run on until a runner starts in that folder again.
      const left = processesOfTask(id);
      expect(left.length).toBeGreaterThanOrEqual(2);
      // Still there after the runner is gone.
      expect(left.every((pid) => alive(pid))).toBe(true);
      await startRunner(dir, env);
      await waitFor(async () => processesOfTask(id).length === 0, 10_000, 'the leftovers to be killed');
    }
  }, 120_000);

  it('stops, without reconnecting, when the server refuses its protocol version or speaks another', async () => {
    const dir = prepared();
    const reason = 'Runner protocol 1 (signalbox 0.1.0) is not supported: this server speaks protocol 2';
    server.refuseHello = { code: runnerClose.incompatible.code, reason };
    const connections = server.connections;
    const refused = await runToEnd(['start', '--dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain(`INCOMPATIBLE SERVER: ${reason}`);
    expect(server.connections).toBe(connections + 1);
    // An older server closes a hello it cannot read with a plain protocol error: the same, in the runner's words.
    server.refuseHello = runnerClose.protocol;
    const older = await runToEnd(['start', '--dir', dir]);
    expect(older.code).toBe(1);
    expect(older.output).toContain(
      `INCOMPATIBLE SERVER: the server refused the hello of runner protocol ${runnerProtocol}`,
    );
    server.refuseHello = null;
    server.welcomeProtocol = runnerProtocol + 1;
    const newer = await runToEnd(['start', '--dir', dir]);
    expect(newer.code).toBe(1);
    expect(newer.output).toContain(`it speaks runner protocol ${runnerProtocol + 1}`);
    expect(server.connections).toBe(connections + 3);
  }, 120_000);

  it('exits with a clear message when the server no longer accepts its token', async () => {
    const dir = prepared();
    const { token } = JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8'));
    server.tokens.delete(token);
    const res = await runToEnd(['start', '--dir', dir]);
    expect(res.code).toBe(1);
    expect(res.output).toContain('does not accept this runner');
    expect(res.output).not.toContain(token);
  }, 120_000);
});
