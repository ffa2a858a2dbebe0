import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TaskOutputLine, TaskWithTemplate } from '@signalbox/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/support/net';
import { dataDirDbUrl, postForId, serverChild, serverDb } from '../../test/support/server-child';
import { cookieApi, localUrl, serverBin, serverProcessEnv } from '../../test/support/server-process';
import { insertTemplate, waitFor } from '../../test/support/task-fixtures';
import { insertGitRepository } from '../../test/support/task-runs';

/**
 * The remote client commands as people and scripts use them: a real `signalbox server` process and real
 * `signalbox` client processes (login, run --follow, task, stop, approve, reject, --json), one server for the file.
 */

const SECRET_ANSWER = 'survey-secret-answer-9f3e';

const scripts = {
  // Lines with spaces, tabs, unicode and an empty line: printed as stored.
  'ok.sh':
    'echo "answers: $*"\necho "tabs\there  and  spaces"\necho "ünïcödé ✓"\necho\nfor i in 1 2 3; do echo "step $i"; done\necho "done"\n',
  'fail.sh': 'echo "about to fail"\necho "on stderr" >&2\nexit 1\n',
  'slow.sh': 'echo "before the sleep"\nsleep 600\necho "never printed"\n',
};

const surveyVars = [
  { name: 'greeting', title: 'Greeting', type: 'string', required: true },
  { name: 'count', title: 'Count', type: 'int', required: false, min: 1, max: 10 },
  { name: 'api_key', title: 'API key', type: 'secret', required: false },
];

type Run = { code: number | null; stdout: string; stderr: string };

describe('signalbox client commands against a server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-cli-server-'));
  const home = mkdtempSync(join(tmpdir(), 'sb-cli-home-'));
  const configHome = join(home, 'config');
  const server = serverChild(serverProcessEnv(dataDir));
  let api: ReturnType<typeof cookieApi>;
  let url: string;
  let token: string;
  let projectId: number;
  let repoDir = '';
  /** Everything any client process wrote, to look for the token in. */
  const written: string[] = [];
  /** The command lines of every client process and of the processes they started. */
  const commandLines: string[] = [];

  /** The client's environment: its own home and config folder, no Signalbox setting of the test's own. */
  function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) env[k] = v;
    return { ...env, HOME: home, XDG_CONFIG_HOME: configHome, ...extra };
  }

  /** Starts `signalbox …`; `input` is written to its stdin. */
  function start(args: string[], { input = '', env = {} as Record<string, string> } = {}) {
    const child = spawn(process.execPath, [serverBin, ...args], { env: clientEnv(env) });
    const run: Run & { exited: Promise<Run>; child: ChildProcessWithoutNullStreams } = {
      code: null,
      stdout: '',
      stderr: '',
      child,
      exited: new Promise((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code) => {
          run.code = code;
          written.push(run.stdout, run.stderr);
          resolve(run);
        });
      }),
    };
    child.stdout.on('data', (d) => {
      run.stdout += d;
    });
    child.stderr.on('data', (d) => {
      run.stderr += d;
    });
    child.stdin.end(input);
    recordCommandLines(child.pid);
    return run;
  }

  const signalbox = (args: string[], options?: Parameters<typeof start>[1]) => start(args, options).exited;

  /** Keeps the command line of `pid` and of every process it started (read from /proc while they live). */
  function recordCommandLines(pid: number | undefined) {
    if (!pid) return;
    const seen = new Set<number>();
    const visit = (p: number) => {
      if (seen.has(p)) return;
      seen.add(p);
      try {
        commandLines.push(readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' '));
      } catch {
        return;
      }
      for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
        try {
          const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
          if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === p) visit(Number(entry));
        } catch {}
      }
    };
    visit(pid);
  }

  /** Every stored line of a task's log, read page by page through the API as a session. */
  async function storedLines(taskId: number): Promise<string[]> {
    const lines: TaskOutputLine[] = [];
    for (let after: number | undefined; ; ) {
      const page = (await (
        await api('GET', `/api/project/${projectId}/tasks/${taskId}/output${after ? `?after=${after}` : ''}`)
      ).json()) as TaskOutputLine[];
      lines.push(...page);
      if (page.length === 0) return lines.map((l) => l.output);
      after = page.at(-1)?.id;
    }
  }

  const task = async (id: number) =>
    (await (await api('GET', `/api/project/${projectId}/tasks/${id}`)).json()) as TaskWithTemplate;

  /** The lines a run wrote to stdout (its last newline ends the last line). */
  const linesOf = (stdout: string) => stdout.replace(/\n$/, '').split('\n');

  const startedId = (stderr: string) => Number(/Started task (\d+)/.exec(stderr)?.[1]);

  beforeAll(async () => {
    const cookie = await server.startAndSignIn();
    api = cookieApi(server.port, cookie);
    url = localUrl(server.port, '');
    projectId = await postForId(api, '/api/projects', { name: 'Scripts' });
    const { handle, rows } = serverDb(dataDirDbUrl(dataDir));
    try {
      const repo = await insertGitRepository(rows, projectId, scripts, { fileUrl: true });
      repoDir = repo.dir;
      const template = (name: string, playbook: string, extra = {}) =>
        insertTemplate(rows, projectId, {
          name,
          playbook,
          repository_id: repo.id,
          allow_parallel_tasks: 1,
          ...extra,
        });
      await template('Say hello', 'ok.sh', { survey_vars: JSON.stringify(surveyVars) });
      await template('Fail', 'fail.sh');
      await template('Sleep', 'slow.sh');
    } finally {
      await handle.destroy();
    }
    const made = (await (await api('POST', '/api/user/tokens', { name: 'cli' })).json()) as { token: string };
    token = made.token;
  });

  afterAll(() => {
    if (server.running()) server.process?.kill('SIGKILL');
    for (const dir of [dataDir, home, repoDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('logs in with the token from stdin and stores it for its owner only', async () => {
    const run = await signalbox(['login', '--url', `${url}/`], { input: `${token}\n` });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Signed in to ${url} as admin \\(Admin\\)`));
    const file = join(configHome, 'signalbox', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(configHome, 'signalbox')).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ url, token });
    // Nothing is left of the write beside the file.
    expect(readdirSync(join(configHome, 'signalbox'))).toEqual(['credentials.json']);
  });

  it('refuses a wrong token with one line and exit code 1, storing nothing', async () => {
    const login = await signalbox(['login', '--url', url, '--json'], { input: 'not-the-token\n' });
    expect(login.code).toBe(1);
    expect(login.stdout).toBe('');
    expect(login.stderr).toBe(
      `signalbox login: the server at ${url} refused the API token (401): run signalbox login --url ${url} with a valid token\n`,
    );
    // The stored token is the earlier one.
    expect(JSON.parse(readFileSync(join(configHome, 'signalbox', 'credentials.json'), 'utf8')).token).toBe(
      token,
    );

    const run = await signalbox(['projects'], { env: { SIGNALBOX_TOKEN: 'wrong-token' } });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe(
      `signalbox projects: the server at ${url} refused the API token (401): check SIGNALBOX_TOKEN\n`,
    );
  });

  it('says in one line when the server cannot be reached or has no such task', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const unreachable = await signalbox(['projects'], {
      env: { SIGNALBOX_URL: closed, SIGNALBOX_TOKEN: token },
    });
    expect(unreachable).toMatchObject({ code: 1, stdout: '' });
    expect(unreachable.stderr).toBe(
      `signalbox projects: cannot reach the server at ${closed} (connection refused)\n`,
    );

    const missing = await signalbox(['task', '999999', '--project', 'Scripts']);
    expect(missing).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'signalbox task: no task 999999 in project "Scripts"\n',
    });
    const usage = await signalbox(['run']);
    expect(usage).toMatchObject({ code: 1, stdout: '' });
    expect(usage.stderr).toBe(
      'signalbox run: run needs a template (its id or name) (signalbox run --help)\n',
    );
    // A stored token is never sent to another server than the one it was stored for.
    const elsewhere = await signalbox(['projects'], { env: { SIGNALBOX_URL: closed } });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(
      /^signalbox projects: no token for http:\/\/127\.0\.0\.1:\d+: set SIGNALBOX_TOKEN/,
    );
  });

  it('lists projects and templates as JSON that parses', async () => {
    const projects = await signalbox(['projects', '--json']);
    expect(projects).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(projects.stdout)).toEqual([
      expect.objectContaining({ id: projectId, name: 'Scripts' }),
    ]);

    const templates = await signalbox(['templates', '--project', 'Scripts', '--json']);
    expect(templates).toMatchObject({ code: 0, stderr: '' });
    const listed = JSON.parse(templates.stdout) as { name: string; survey_vars: { name: string }[] }[];
    expect(listed.map((t) => t.name).sort()).toEqual(['Fail', 'Say hello', 'Sleep']);
    expect(listed.find((t) => t.name === 'Say hello')?.survey_vars.map((v) => v.name)).toEqual([
      'greeting',
      'count',
      'api_key',
    ]);

    const text = await signalbox(['templates']);
    expect(text.code).toBe(0);
    expect(linesOf(text.stdout)[0]).toMatch(/^PROJECT\s+ID\s+NAME\s+APP\s+SURVEY/);
    expect(text.stdout).toMatch(
      /Scripts\s+\d+\s+Say hello\s+bash\s+greeting\*:string count:int api_key:secret/,
    );
  });

  it('runs a template with --follow: prints the stored log line for line and exits 0', async () => {
    const run = await signalbox([
      'run',
      'Say hello',
      '--var',
      'greeting=hi there',
      '--var',
      'count=3',
      '--var',
      `api_key=${SECRET_ANSWER}`,
      '--follow',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const id = startedId(run.stderr);
    expect(linesOf(run.stdout)).toEqual(await storedLines(id));
    expect(run.stdout).toContain('step 3\ndone\n');
    // Survey answers reach the run typed (count as a number passes the survey's minimum and maximum).
    expect(JSON.parse((await task(id)).environment)).toEqual({ greeting: 'hi there', count: 3 });
    expect(run.stdout).not.toContain(SECRET_ANSWER);
    expect(run.stderr).toBe(
      `Started task ${id} of Say hello in project Scripts\nTask ${id} ended: success\n`,
    );
  });

  it('exits 1 for a failed task, with the same lines as the stored log', async () => {
    const run = await signalbox(['run', 'Fail', '--project', String(projectId), '--follow']);
    expect(run.code).toBe(1);
    const id = startedId(run.stderr);
    expect((await task(id)).status).toBe('error');
    expect(linesOf(run.stdout)).toEqual(await storedLines(id));
    expect(run.stdout).toContain('about to fail\n');

    // Following it again from the start (without --project: the task is looked up) gives the same.
    const again = await signalbox(['task', String(id), '--follow']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe(run.stdout);
    const waited = await signalbox(['run', 'Fail', '--wait', '--json']);
    expect(waited.code).toBe(1);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'error', tpl_alias: 'Fail' });
  });

  it('exits 2 when the followed task is stopped, by another signalbox process', async () => {
    const follower = start(['run', 'Sleep', '--follow']);
    await waitFor(async () => follower.stdout.includes('before the sleep\n'), 60_000, 'the first line');
    const id = startedId(follower.stderr);
    // The follower and whatever it started never carry the token on their command line.
    recordCommandLines(follower.child.pid);
    const stop = await signalbox(['stop', String(id), '--json']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({
      id,
      status: expect.stringMatching(/^(stopping|stopped)$/),
    });
    const followed = await follower.exited;
    expect(followed.code).toBe(2);
    expect((await task(id)).status).toBe('stopped');
    expect(linesOf(followed.stdout)).toEqual(await storedLines(id));
    expect(followed.stdout).not.toContain('never printed');
    expect(followed.stderr).toContain(`Task ${id} ended: stopped\n`);
  });

  it('streams JSON Lines with --json --follow, the last one the task as it ended', async () => {
    const run = await signalbox(['run', 'Say hello', '--var', 'greeting=json', '--follow', '--json']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const events = linesOf(run.stdout).map((line) => JSON.parse(line));
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'task', task: { status: 'success', tpl_alias: 'Say hello' } });
    const lines = events.filter((e) => e.type === 'line').map((e) => e.output);
    expect(lines).toEqual(await storedLines(last.task.id));

    const started = await signalbox(['run', 'Say hello', '--var', 'greeting=no wait', '--json']);
    expect(started).toMatchObject({ code: 0, stderr: '' });
    const created = JSON.parse(started.stdout) as TaskWithTemplate;
    expect(created).toMatchObject({ tpl_alias: 'Say hello', project_id: projectId, source: 'api' });
    const shown = await signalbox(['task', String(created.id), '--wait', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: created.id, status: 'success' });
  });

  it('refuses a survey answer the survey forbids, naming the field', async () => {
    const run = await signalbox(['run', 'Say hello', '--var', 'greeting=x', '--var', 'count=99']);
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toBe('signalbox run: count: Count must be at most 10\n');
  });

  it('approves and rejects runs an AI agent started, which wait for approval', async () => {
    const agentToken = (
      (await (await api('POST', '/api/user/tokens', { name: 'agent', scopes: ['read', 'run'] })).json()) as {
        token: string;
      }
    ).token;
    const agent = new McpClient({ name: 'cli-test-agent', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${agentToken}` } },
      }),
    );
    const templates = (await (await api('GET', `/api/project/${projectId}/templates`)).json()) as {
      id: number;
      name: string;
    }[];
    const agentRun = async () => {
      const result = (await agent.callTool({
        name: 'run_template',
        arguments: {
          project_id: projectId,
          template_id: templates.find((t) => t.name === 'Say hello')?.id,
          answers: { greeting: 'from an agent' },
        },
      })) as { content: { text: string }[] };
      return (JSON.parse(result.content[0]?.text ?? '{}') as { task_id: number }).task_id;
    };
    try {
      const approved = await agentRun();
      expect((await task(approved)).status).toBe('waiting_approval');
      // The token that started a run cannot approve it.
      const own = await signalbox(['approve', String(approved)], {
        env: { SIGNALBOX_URL: url, SIGNALBOX_TOKEN: agentToken },
      });
      expect(own).toMatchObject({ code: 1, stdout: '' });
      expect(own.stderr).toMatch(
        /^signalbox approve: The API token that started this run cannot approve it[^\n]*\n$/,
      );
      const approve = await signalbox(['approve', String(approved), '--project', 'Scripts', '--json']);
      expect(approve.code, approve.stderr).toBe(0);
      expect(JSON.parse(approve.stdout)).toMatchObject({ id: approved, source: 'mcp' });
      expect(JSON.parse(approve.stdout).status).not.toBe('waiting_approval');
      const followed = await signalbox(['task', String(approved), '--follow']);
      expect(followed.code).toBe(0);
      expect(linesOf(followed.stdout)).toEqual(await storedLines(approved));

      const rejected = await agentRun();
      const reject = await signalbox(['reject', String(rejected), '--reason', 'not during the freeze']);
      expect(reject).toMatchObject({ code: 0, stdout: `Task ${rejected} rejected\n` });
      expect(await task(rejected)).toMatchObject({ status: 'rejected', message: 'not during the freeze' });
      const waited = await signalbox(['task', String(rejected), '--wait']);
      expect(waited.code).toBe(1);
      expect(waited.stdout).toBe(`Task ${rejected} ended: rejected: not during the freeze\n`);
    } finally {
      await agent.close();
    }
  });

  it('cannot start a task with a read token', async () => {
    const made = (await (
      await api('POST', '/api/user/tokens', { name: 'reader', scopes: ['read'] })
    ).json()) as { token: string };
    const reader = { SIGNALBOX_URL: url, SIGNALBOX_TOKEN: made.token };
    expect((await signalbox(['projects'], { env: reader })).code).toBe(0);
    const run = await signalbox(['run', 'Say hello', '--var', 'greeting=x'], { env: reader });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.stderr).toMatch(/^signalbox run: .*\brun\b/);
  });

  it('shows the spinner on a terminal only, never with --json', async () => {
    // `script` gives the command a terminal (a pseudo-terminal for stdin, stdout and stderr).
    const onTerminal = (args: string[]) =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(
          'script',
          ['-qfec', [process.execPath, serverBin, ...args].join(' '), '/dev/null'],
          {
            env: clientEnv(),
          },
        );
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
        });
        child.on('error', reject);
        child.on('close', () => resolve(out));
      });
    const spinner = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;
    expect(await onTerminal(['projects'])).toMatch(spinner);
    const json = await onTerminal(['projects', '--json']);
    expect(json).not.toMatch(spinner);
    expect(JSON.parse(json)).toEqual([expect.objectContaining({ name: 'Scripts' })]);
    // Every run above wrote to pipes: no spinner frame, no carriage return.
    expect(written.join('')).not.toMatch(spinner);
    expect(written.join('')).not.toContain('\r');
  });

  it('never shows the token: not in any output, not on any command line', () => {
    expect(written.length).toBeGreaterThan(20);
    for (const text of written) expect(text).not.toContain(token);
    expect(commandLines.length).toBeGreaterThan(20);
    for (const line of commandLines) expect(line).not.toContain(token);
  });

  it('logs out: the stored token is removed', async () => {
    const run = await signalbox(['logout']);
    expect(run.code).toBe(0);
    expect(readdirSync(join(configHome, 'signalbox'))).toEqual([]);
    const after = await signalbox(['projects']);
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^signalbox projects: not signed in: run signalbox login --url/);
  });
});
