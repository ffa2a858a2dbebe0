import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type LineTarget, type ProcessSpec, systemProcesses } from './process';
import type { TaskSandbox } from './sandbox';

// A prepared sandbox's launcher must hand its command exactly what a command started the usual way gets: the same
// arguments, environment, directory, output and exit. The sandbox here only passes the command through (the
// launcher's work does not depend on bubblewrap; the hostile-repository test runs it confined).

const passThrough: TaskSandbox = {
  mode: 'session',
  enter: (command, args) => ({ command, args, started() {}, release: async () => {} }),
  killAll: async () => {},
};

const dir = mkdtempSync(join(tmpdir(), 'sb-prepared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function collect(): LineTarget & { lines: string[] } {
  const lines: string[] = [];
  return { lines, line: (l) => lines.push(l), pressure: () => false, onDrain() {} };
}

const prepare = () => {
  const prepared = systemProcesses.prepare?.({
    cwd: dir,
    path: '/usr/bin:/bin',
    sandbox: passThrough,
    binds: [],
  });
  if (!prepared) throw new Error('this machine cannot prepare a sandbox (no /usr/bin/env)');
  return prepared;
};

/** Runs `spec` both ways and answers what each printed and how it ended. */
async function bothWays(spec: ProcessSpec) {
  const usual = collect();
  const usualExit = await systemProcesses.run(spec, usual).wait();
  const viaLauncher = collect();
  const proc = prepare().run(spec, viaLauncher);
  expect(proc).not.toBeNull();
  const launchedExit = await proc?.wait();
  return {
    usual: { lines: usual.lines, exit: usualExit },
    launched: { lines: viaLauncher.lines, exit: launchedExit },
  };
}

const hostile = {
  SPACES: 'a b  c',
  NEWLINES: 'one\ntwo\n',
  QUOTES: `'"\`$(touch ${dir}/pwned)\`"'`,
  EMPTY: '',
  EQUALS: 'x=y=z',
  IFS: ':',
  n: '5',
  f: 'array?',
};

describe('a command started in a prepared sandbox', () => {
  it('gets exactly the environment a usual start gives it, hostile values included', async () => {
    const env = { PATH: '/usr/bin:/bin', ...hostile };
    const { usual, launched } = await bothWays({ command: 'env', args: ['-0'], cwd: dir, env });
    // The same entries (their order is the shell's: no program may rely on it).
    const pairs = (lines: string[]) => lines.join('\n').split('\0').filter(Boolean).sort();
    expect(launched.exit).toEqual(usual.exit);
    expect(pairs(usual.lines)).toEqual(
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
    expect(pairs(launched.lines)).toEqual(pairs(usual.lines));
    expect(() => readFileSync(join(dir, 'pwned'))).toThrow();
  });

  it('gets the same arguments, options and shell text included, and starts in its directory', async () => {
    const args = ['%s|', '-u', '--', 'a b', '$(id)', '*', '', 'x\ny', '-0'];
    const env = { PATH: '/usr/bin:/bin' };
    const printed = await bothWays({ command: 'printf', args, cwd: dir, env });
    expect(printed.launched).toEqual(printed.usual);
    expect(printed.launched.lines.join('\n')).toBe('-u|--|a b|$(id)|*||x\ny|-0|');
    const where = await bothWays({ command: 'pwd', args: [], cwd: dir, env });
    expect(where.launched.lines).toEqual([dir]);
  });

  it('ends with the command’s exit code and signal', async () => {
    const env = { PATH: '/usr/bin:/bin' };
    const code = await bothWays({
      command: 'sh',
      args: ['-c', 'echo out; echo err >&2; exit 7'],
      cwd: dir,
      env,
    });
    expect(code.launched).toEqual(code.usual);
    expect(code.launched.exit).toEqual({ code: 7, signal: null });
    const killed = await bothWays({ command: 'sh', args: ['-c', 'kill -TERM $$'], cwd: dir, env });
    expect(killed.launched.exit).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('is refused for an environment the shell would change, and the command then starts as usual', () => {
    for (const name of ['UID', 'SHLVL', 'BASH_ENV', 'SHELLOPTS', 'my.name', '_sbl_f', '_'])
      expect(
        prepare().run(
          { command: 'true', args: [], cwd: dir, env: { PATH: '/usr/bin', [name]: 'x' } },
          collect(),
        ),
      ).toBeNull();
    // A command name with "=" would read as an assignment to env.
    expect(
      prepare().run({ command: 'A=b', args: [], cwd: dir, env: { PATH: '/usr/bin' } }, collect()),
    ).toBeNull();
  });

  it('leaves no process behind when no command takes it', async () => {
    const prepared = prepare();
    const pid = prepared.pid;
    expect(pid).toBeGreaterThan(0);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'latin1')).toMatch(/^bash\0-c\0mapfile /);
    await prepared.dispose();
    // Gone, not even a zombie: its parent (this process) has reaped it.
    expect(() => readFileSync(`/proc/${pid}/stat`, 'utf8')).toThrow();
  });
});
