import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config';
import { forget, learn, membersOf, type ProcInfo, parseStat, self, type Tracked } from './proc-table';

const proc = (pid: number, ppid: number, sid: number, pgrp: number, start: string): ProcInfo => ({
  pid,
  ppid,
  sid,
  pgrp,
  start,
  zombie: false,
});
const table = (...procs: ProcInfo[]) => new Map(procs.map((p) => [p.pid, p]));
const pids = (members: ProcInfo[]) => members.map((p) => p.pid).sort((a, b) => a - b);

describe('parseStat', () => {
  it('reads ppid, group, session and start time even when the name holds spaces and parentheses', () => {
    const text = '4242 (evil ) (name) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1 2 3\n';
    expect(parseStat(text)).toEqual({
      pid: 4242,
      ppid: 1,
      pgrp: 4242,
      sid: 4242,
      start: '987654',
      zombie: false,
    });
    expect(parseStat('7 (z) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0 0')?.zombie).toBe(true);
  });
});

describe('membersOf', () => {
  const tracked = (known: [number, string][], ids: [number, string | null][]): Tracked => ({
    known: new Map(known),
    ids: new Map(ids),
  });

  it('follows descendants and the members of a session whose leader is the one seen before', () => {
    const procs = table(
      proc(100, 1, 100, 100, 's100'), // the task's command
      proc(101, 100, 100, 100, 's101'), // its child
      proc(200, 1, 200, 200, 's200'), // escaped: new session, parent gone
      proc(201, 1, 200, 201, 's201'), // in that session, another group, parent gone
      proc(300, 1, 300, 300, 's300'), // unrelated
    );
    const t = tracked([[100, 's100']], [[200, 's200']]);
    expect(pids(membersOf(procs, t))).toEqual([100, 101, 200, 201]);
  });

  it('never takes a reused id: leader start time differs and no known process is in it', () => {
    const procs = table(proc(200, 1, 200, 200, 'new'), proc(201, 200, 200, 200, 'new2'));
    expect(membersOf(procs, tracked([], [[200, 'old']]))).toEqual([]);
    // A known pid with another start time is another process.
    expect(membersOf(procs, tracked([[201, 'old2']], []))).toEqual([]);
  });

  it('keeps a session whose leader is gone while a known process is still in it', () => {
    const procs = table(proc(201, 1, 200, 201, 's201'), proc(202, 1, 200, 202, 's202'));
    expect(pids(membersOf(procs, tracked([[201, 's201']], [[200, 's200']])))).toEqual([201, 202]);
    expect(membersOf(procs, tracked([], [[200, 's200']]))).toEqual([]);
  });

  it("never takes the server's own session or group, nor the server", () => {
    const procs = table(
      proc(self.pid, 1, self.sid, self.pgrp, 'me'),
      proc(900, self.pid, self.sid, self.pgrp, 's900'), // a known helper that stayed in the server's session
      proc(901, 900, 901, 901, 's901'),
      proc(950, 1, self.sid, 950, 's950'), // something else in the server's session
    );
    // Even a record naming the server's session (a task may write its own directory) takes nothing by it.
    const t = tracked([[900, 's900']], [[self.sid, procs.get(self.sid)?.start ?? 'me']]);
    expect(pids(membersOf(procs, t))).toEqual([900, 901]);
    const fresh = tracked([[900, 's900']], []);
    learn(fresh, membersOf(procs, fresh), procs);
    expect([...fresh.ids.keys()]).toEqual([901]);
  });

  it('learns new sessions with their leader and forgets what is gone', () => {
    const before = table(proc(100, 1, 100, 100, 'a'), proc(150, 100, 150, 150, 'b'));
    const t = tracked([[100, 'a']], [[100, 'a']]);
    expect(learn(t, membersOf(before, t), before)).toBe(true);
    expect([...t.known]).toEqual([
      [100, 'a'],
      [150, 'b'],
    ]);
    expect(t.ids.get(150)).toBe('b');
    const after = table(proc(150, 1, 150, 150, 'b'));
    expect(forget(t, membersOf(after, t))).toBe(true);
    expect([...t.known]).toEqual([[150, 'b']]);
    expect([...t.ids.keys()]).toEqual([150]);
  });
});

describe('SIGNALBOX_TASK_ISOLATION', () => {
  it('is auto unless set to cgroup or session; anything else stops the server naming the variable', () => {
    expect(loadConfig({}).taskIsolation).toBe('auto');
    expect(loadConfig({ SIGNALBOX_TASK_ISOLATION: 'session' }).taskIsolation).toBe('session');
    expect(loadConfig({ SIGNALBOX_TASK_ISOLATION: 'cgroup' }).taskIsolation).toBe('cgroup');
    expect(() => loadConfig({ SIGNALBOX_TASK_ISOLATION: 'none' })).toThrow(
      new ConfigError('SIGNALBOX_TASK_ISOLATION: must be auto, cgroup or session'),
    );
  });
});
