import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, waitFor } from '../../../test/support/task-fixtures';
import {
  type LineTarget,
  OUTPUT_AFTER_EXIT_CUT_MS,
  OUTPUT_IDLE_CUT_MS,
  outputCutMessage,
  type ProcessSpec,
  systemProcesses,
} from './process';

/** A consumer that holds the output pipes paused until released, as a runner does while acknowledgements lag. */
class HeldTarget implements LineTarget {
  readonly lines: string[] = [];
  private held = true;
  private drains: (() => void)[] = [];
  line(text: string) {
    this.lines.push(text);
  }
  pressure() {
    return this.held;
  }
  onDrain(callback: () => void) {
    this.drains.push(callback);
  }
  release() {
    this.held = false;
    for (const callback of this.drains.splice(0)) callback();
  }
}

/** Collects lines and never pauses. */
class OpenTarget implements LineTarget {
  readonly lines: string[] = [];
  line(text: string) {
    this.lines.push(text);
  }
  pressure() {
    return false;
  }
  onDrain() {}
}

const bash = (dir: string, script: string): ProcessSpec => ({
  command: 'bash',
  args: ['-c', script],
  cwd: dir,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
});

describe('reading a process’s output to its end', () => {
  const dirs: string[] = [];
  const leftBehind: number[] = [];
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'signalbox-drain-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const pid of leftBehind.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('waits for every line while the consumer holds the pipes paused, however long after the exit', async () => {
    // The first line fills the consumer. The rest (about 150 KB: several chunks) waits in the socket that carries
    // the output when the process exits.
    const target = new HeldTarget();
    const proc = systemProcesses.run(
      bash(newDir(), "echo first; sleep 0.3; seq -f 'tail %.0f' 1 15000"),
      target,
    );
    const pid = proc.pid as number;
    await waitFor(async () => !alive(pid), 20_000, 'the process to exit');
    let resolvedAt = 0;
    const waited = proc.wait().then((result) => {
      resolvedAt = Date.now();
      return result;
    });
    // The consumer stays full past the time an idle pipe would be cut, then takes everything.
    const releasedAt = await new Promise<number>((resolve) =>
      setTimeout(() => {
        target.release();
        resolve(Date.now());
      }, OUTPUT_IDLE_CUT_MS + 1000),
    );
    expect((await waited).code).toBe(0);
    expect(resolvedAt).toBeGreaterThanOrEqual(releasedAt);
    expect(target.lines).toHaveLength(15_001);
    expect(target.lines.at(-1)).toBe('tail 15000');
    expect(target.lines).not.toContain(outputCutMessage);
  }, 30_000);

  it('cuts output that a process left behind keeps open, and says so as the last line', async () => {
    const dir = newDir();
    const target = new OpenTarget();
    const started = Date.now();
    // The left-behind process starts a session of its own: it escapes the process group that is killed at the exit.
    const proc = systemProcesses.run(
      bash(
        dir,
        "setsid bash -c 'echo $$ > left.pid; exec sleep 60' & until [ -s left.pid ]; do sleep 0.05; done; echo main done",
      ),
      target,
    );
    const leftPid = await waitFor(async () => {
      try {
        return Number(readFileSync(join(dir, 'left.pid'), 'utf8').trim()) || null;
      } catch {
        return null;
      }
    });
    leftBehind.push(leftPid);
    expect((await proc.wait()).code).toBe(0);
    expect(Date.now() - started).toBeLessThan(OUTPUT_IDLE_CUT_MS + 15_000);
    expect(alive(leftPid)).toBe(true);
    expect(target.lines).toEqual(['main done', outputCutMessage]);
  }, 30_000);

  it('cuts output that a process left behind keeps writing, and says so as the last line', async () => {
    const dir = newDir();
    const target = new OpenTarget();
    const proc = systemProcesses.run(
      bash(
        dir,
        // It ignores SIGPIPE, as a daemon that never checks its writes: once its output is cut it keeps running
        // (otherwise its next tick after the cut would end it, racing the check below).
        'setsid bash -c \'trap "" PIPE; echo $$ > left.pid; while :; do echo tick; sleep 0.1; done\' & until [ -s left.pid ]; do sleep 0.05; done; echo main done',
      ),
      target,
    );
    const leftPid = await waitFor(async () => {
      try {
        return Number(readFileSync(join(dir, 'left.pid'), 'utf8').trim()) || null;
      } catch {
        return null;
      }
    });
    leftBehind.push(leftPid);
    const waited = Date.now();
    expect((await proc.wait()).code).toBe(0);
    expect(Date.now() - waited).toBeLessThan(OUTPUT_AFTER_EXIT_CUT_MS + 10_000);
    expect(target.lines).toContain('main done');
    expect(target.lines.at(-1)).toBe(outputCutMessage);
    // It was still writing when its output was cut.
    expect(alive(leftPid)).toBe(true);
    expect(target.lines).toContain('tick');
  }, 60_000);

  it('says nothing of a cut when the pipes close with the process', async () => {
    const target = new OpenTarget();
    const proc = systemProcesses.run(bash(newDir(), 'echo one; echo two >&2'), target);
    expect((await proc.wait()).code).toBe(0);
    expect(target.lines.sort()).toEqual(['one', 'two']);
  });

  it('reports a command that exits without reading its input by its exit code, and nothing else breaks', async () => {
    // Far more than a pipe holds: the write is still going when the command exits and the pipe closes (EPIPE).
    const input = 'x'.repeat(4 * 1024 * 1024);
    const result = await systemProcesses.capture(bash(newDir(), 'exit 3'), input);
    expect(result.code).toBe(3);
  });
});
