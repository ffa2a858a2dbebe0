import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobDetails } from '../../../test/support/fake-job';
import { gitRepo } from '../../../test/support/task-fixtures';
import { appRegistry } from '../../lib/apps';
import type { ProcessAdapter, ProcessSpec } from '../sandbox/process';
import type { RepositoryRow, TaskRow, TemplateRow } from '../store';
import { RunControl, type RunCore, runCore, type TaskLog } from './run-core';

const internalErrorLine = 'The task failed with an internal error (see the server log)';

/**
 * A run of a bash template from a local repository over processes that run nothing: each command is "started"
 * (recorded in `events`) and ends when `finish` is called, or when it is killed. `saveStatus('running')` answers
 * as `running` says.
 */
function harness(repoDir: string, running: () => Promise<boolean>) {
  const events: string[] = [];
  const lines: string[] = [];
  const errors: string[] = [];
  const started: { spec: ProcessSpec; finish(code: number): void; killed: boolean }[] = [];
  const processes: ProcessAdapter = {
    run(spec) {
      let end: (result: { code: number | null; signal: NodeJS.Signals | null }) => void = () => {};
      const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        end = resolve;
      });
      const entry = { spec, finish: (code: number) => end({ code, signal: null }), killed: false };
      started.push(entry);
      events.push(`command ${spec.args.at(-1)?.split('/').pop()}`);
      return {
        pid: undefined,
        wait: () => ended,
        kill() {
          entry.killed = true;
          end({ code: null, signal: 'SIGKILL' });
        },
      };
    },
    async capture() {
      return { code: 0, signal: null, stdout: '', stderr: '' };
    },
  };
  const sink = {
    line: (l: string) => void lines.push(l),
    pressure: () => false,
    onDrain() {},
    mask: (t: string) => t,
    addSecrets() {},
    watch: () => () => {},
    close: async () => {},
    lost: 0,
  } as unknown as TaskLog;
  const task = { id: 7, project_id: 1, template_id: 3, commit_hash: null, commit_message: null } as TaskRow;
  const template = { id: 3, name: 'Script', app: 'bash', playbook: 'run.sh', arguments: null } as TemplateRow;
  const repository = {
    id: 2,
    project_id: 1,
    name: 'scripts',
    git_url: repoDir,
    git_branch: 'main',
    ssh_key_id: null,
  } as unknown as RepositoryRow;
  const details = jobDetails({ task, template, repository });
  const work = mkdtempSync(join(tmpdir(), 'sb-run-core-'));
  const core: RunCore = {
    taskId: 7,
    log: { error: (obj, msg) => void errors.push(`${msg}: ${(obj as { err?: Error }).err?.message}`) },
    internalErrorLine,
    processes,
    apps: appRegistry(),
    webRoot: 'http://127.0.0.1:1',
    isolation: 'session',
    confinement: { mode: 'off', reason: 'test' },
    outputLimit: 0,
    owner: 'test',
    dirs: { task: join(work, 'task'), home: join(work, 'home'), reposCache: join(work, 'repos') },
    sink,
    loadDetails: async () => details,
    findKey: async () => null,
    findInventoryRepository: async () => null,
    saveCommit: async (hash, message) => void events.push(`commit ${hash?.slice(0, 7)} ${message}`),
    savePlan: async () => {},
    saveDrift: async () => {},
    async saveStatus(status, extra) {
      events.push(`status ${status}${extra ? ` (${extra.message})` : ''}`);
      return status === 'running' ? running() : true;
    },
  };
  return {
    core,
    events,
    lines,
    errors,
    started,
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  };
}

/** Resolves once `check` holds, looking again at every turn of the event loop. */
async function until(check: () => boolean) {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('a run marks its task running while the first command starts', () => {
  let repoDir: string;
  beforeAll(() => {
    repoDir = gitRepo({ 'run.sh': 'echo hello\n' });
  });
  afterAll(() => rmSync(repoDir, { recursive: true, force: true }));

  it('hands the command over first, then saves the commit and the move to running; the end comes after both', async () => {
    const h = harness(repoDir, async () => true);
    const run = runCore(h.core, new RunControl());
    await until(() => h.started.length === 1);
    await until(() => h.events.includes('status running'));
    h.started[0]?.finish(0);
    expect(await run).toBe('success');
    expect(h.events.map((e) => e.replace(/^commit [0-9a-f]{7} /, 'commit '))).toEqual([
      'command run.sh',
      'commit initial commit',
      'status running',
      'status success',
    ]);
    h.cleanup();
  });

  it('saves the end of a command that ends at once only after its move to running was saved', async () => {
    let answer: (saved: boolean) => void = () => {};
    const h = harness(
      repoDir,
      () =>
        new Promise<boolean>((resolve) => {
          answer = resolve;
        }),
    );
    const run = runCore(h.core, new RunControl());
    await until(() => h.events.includes('status running'));
    h.started[0]?.finish(0);
    // The command has ended; the move to running is still being saved: nothing else is saved meanwhile.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(h.events.at(-1)).toBe('status running');
    answer(true);
    expect(await run).toBe('success');
    expect(h.events.at(-1)).toBe('status success');
    h.cleanup();
  });

  it('stops the command and ends the run as error when the move to running cannot be saved', async () => {
    const h = harness(repoDir, async () => {
      throw new Error('database unavailable past its retries');
    });
    const run = runCore(h.core, new RunControl());
    expect(await run).toBe('error');
    expect(h.started).toHaveLength(1);
    expect(h.started[0]?.killed).toBe(true);
    expect(h.events.at(-1)).toBe(`status error (${internalErrorLine})`);
    expect(h.lines.at(-1)).toBe(internalErrorLine);
    expect(h.errors).toEqual(['saving the move to running failed: database unavailable past its retries']);
    h.cleanup();
  });
});
