import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Launcher, launcher } from './launcher';
import { systemProcesses } from './process';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z ');
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string, ms = 20_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const text = (stream: Readable) =>
  new Promise<string>((resolve) => {
    const parts: Buffer[] = [];
    stream.on('data', (b: Buffer) => parts.push(b));
    stream.on('close', () => resolve(Buffer.concat(parts).toString('utf8')));
  });

type Outcome = { pid: number; stdout: string; stderr: string; code: number | null; signal: string | null };

/** Launches bash on `script` and collects everything: its pid, both outputs to their end, its exit. */
function run(l: Launcher, script: string, afterLaunch?: (kill: (s: NodeJS.Signals) => void) => void) {
  return new Promise<Outcome>((resolve, reject) => {
    let pid = 0;
    const streams: { stdout?: Promise<string>; stderr?: Promise<string> } = {};
    const launched = l.launch(
      'bash',
      ['-c', script],
      { cwd: '/', env, stdin: false },
      {
        spawned(started) {
          pid = started;
        },
        output(name, stream) {
          streams[name] = text(stream);
        },
        failed: reject,
        async exited(code, signal) {
          const [stdout, stderr] = await Promise.all([streams.stdout, streams.stderr]);
          if (stdout === undefined || stderr === undefined) reject(new Error('an output never came'));
          else resolve({ pid, stdout, stderr, code, signal });
        },
      },
    );
    afterLaunch?.((s) => launched.kill(s));
  });
}

const launchers: Launcher[] = [];
const fresh = (idleMs?: number) => {
  const l = new Launcher(idleMs);
  launchers.push(l);
  return l;
};
afterEach(() => {
  for (const l of launchers.splice(0)) l.stop();
});

describe('the launcher', () => {
  it('starts commands from its helper process, in their own session, with every byte of their output', async () => {
    const l = fresh();
    const helper = await l.whenReady();
    expect(helper).toBeGreaterThan(0);
    expect(helper).not.toBe(process.pid);
    // The first line is written the moment the command starts: a pipe read in the helper before it was handed
    // over would lose it.
    const result = await run(l, 'echo "$PPID $$"; ps -o sid= -p $$; seq 1 200000; seq 1 3000 >&2; exit 3');
    const [first, second, ...rest] = result.stdout.split('\n');
    const [parent, self] = (first ?? '').split(' ').map(Number);
    expect(parent).toBe(helper);
    expect(self).toBe(result.pid);
    expect(Number(second)).toBe(result.pid);
    expect(rest.filter(Boolean)).toHaveLength(200000);
    expect(rest[199999]).toBe('200000');
    expect(result.stderr.split('\n').filter(Boolean)).toHaveLength(3000);
    expect(result).toMatchObject({ code: 3, signal: null });
  });

  it('gives a command no descriptor of its channel to the helper: only its own output is a socket', async () => {
    const l = fresh();
    await l.whenReady();
    const result = await run(
      l,
      'for f in /proc/$$/fd/*; do printf "%s %s\\n" "$(basename "$f")" "$(readlink "$f")"; done',
    );
    const sockets = result.stdout
      .split('\n')
      .filter((line) => line.includes('socket:'))
      .map((line) => line.split(' ')[0]);
    expect(sockets.sort()).toEqual(['1', '2']);
  });

  it('reports a command that cannot start with the error spawn gives', async () => {
    const l = fresh();
    await l.whenReady();
    const viaHelper = await new Promise<Error>((resolve, reject) =>
      l.launch(
        '/nonexistent/tool',
        ['x'],
        { cwd: '/', env, stdin: false },
        {
          spawned: () => reject(new Error('started')),
          output: () => {},
          failed: resolve,
          exited: () => reject(new Error('exited')),
        },
      ),
    );
    const direct = await new Promise<Error>((resolve) =>
      spawn('/nonexistent/tool', ['x'], { env }).on('error', resolve),
    );
    expect(viaHelper.message).toBe(direct.message);
    expect((viaHelper as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('delivers a signal asked for before the command had started', async () => {
    const l = fresh();
    await l.whenReady();
    const result = await run(l, 'sleep 30', (kill) => kill('SIGTERM'));
    expect(result).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it('kills what a helper that ended was watching and starts a new helper for the next command', async () => {
    const l = fresh();
    const helper = await l.whenReady();
    let spawnedPid = 0;
    let grandchild = 0;
    const ended = new Promise<[number | null, string | null]>((resolve, reject) =>
      l.launch(
        'bash',
        ['-c', 'sleep 60 & echo $!; wait'],
        { cwd: '/', env, stdin: false },
        {
          spawned(pid) {
            spawnedPid = pid;
          },
          output(name, stream) {
            if (name === 'stdout')
              stream.once('data', (b: Buffer) => {
                grandchild = Number(String(b).trim());
              });
          },
          failed: reject,
          exited: (code, signal) => resolve([code, signal]),
        },
      ),
    );
    await until(() => grandchild > 0, 'the command to start its child');
    process.kill(helper, 'SIGKILL');
    expect(await ended).toEqual([null, 'SIGKILL']);
    await until(() => !alive(spawnedPid) && !alive(grandchild), "the command's group to end");
    const next = await l.whenReady();
    expect(next).toBeGreaterThan(0);
    expect(next).not.toBe(helper);
    expect(await run(l, 'echo again')).toMatchObject({ stdout: 'again\n', code: 0 });
  });

  it('spawns commands itself for good once helpers keep ending', async () => {
    const l = fresh();
    for (let i = 0; i < 3; i++) {
      const helper = await l.whenReady();
      expect(helper).toBeGreaterThan(0);
      process.kill(helper, 'SIGKILL');
      await until(() => l.helperPid() === 0, 'the killed helper to be noticed');
    }
    expect(await l.whenReady()).toBe(0);
    const result = await run(l, 'echo "$PPID"');
    expect(result).toMatchObject({ stdout: `${process.pid}\n`, code: 0 });
    expect(l.helperPid()).toBe(0);
  });

  it('lets its helper go once no command has run for a while, and starts it again with the next', async () => {
    const l = fresh(200);
    const helper = await l.whenReady();
    expect(await run(l, 'true')).toMatchObject({ code: 0 });
    await until(() => !alive(helper) && l.helperPid() === 0, 'the idle helper to exit');
    expect(await run(l, 'echo back')).toMatchObject({ stdout: 'back\n', code: 0 });
    // A helper slower to start than the idle time is not let go before it is ready: idle time counts from then.
    expect(await fresh(1).whenReady()).toBeGreaterThan(0);
  });
});

describe('the process adapter', () => {
  it("runs a task's command and a captured helper command from the launcher's helper", async () => {
    const helper = await launcher.whenReady();
    const lines: string[] = [];
    const proc = systemProcesses.run(
      { command: 'bash', args: ['-c', 'echo "$PPID"; echo two >&2'], cwd: '/', env },
      { line: (l) => lines.push(l), pressure: () => false, onDrain: () => {} },
    );
    expect(await proc.wait()).toEqual({ code: 0, signal: null });
    expect(lines.sort()).toEqual([String(helper), 'two'].sort());

    const captured = await systemProcesses.capture(
      { command: 'sh', args: ['-c', 'echo "$PPID"; cat; echo err >&2'], cwd: '/', env },
      'the input\n',
    );
    expect(captured).toMatchObject({ code: 0, stdout: `${helper}\nthe input\n`, stderr: 'err\n' });
  });

  it('kills a captured command at its timeout and at a stop, and a command stopped the moment it was asked for', async () => {
    await launcher.whenReady();
    const spec = { command: 'sleep', args: ['30'], cwd: '/', env };
    expect(await systemProcesses.capture(spec, undefined, { timeoutMs: 100 })).toMatchObject({
      code: null,
      signal: 'SIGKILL',
    });
    const stop = new AbortController();
    const stopped = systemProcesses.capture(spec, undefined, { signal: stop.signal });
    stop.abort();
    expect(await stopped).toMatchObject({ code: null, signal: 'SIGKILL' });

    const proc = systemProcesses.run(spec, { line: () => {}, pressure: () => false, onDrain: () => {} });
    proc.kill('SIGTERM');
    expect(await proc.wait()).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
