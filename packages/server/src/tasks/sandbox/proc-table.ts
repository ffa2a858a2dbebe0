import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc/<pid>/stat shows it. `start` (clock ticks since boot) tells a reused pid apart. */
export type ProcInfo = {
  pid: number;
  ppid: number;
  pgrp: number;
  sid: number;
  start: string;
  zombie: boolean;
};

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so fields count from the last ")". */
export function parseStat(text: string): ProcInfo | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const pid = Number.parseInt(text, 10);
  const f = text.slice(close + 2).split(' ');
  const start = f[19];
  if (!(pid > 0) || start === undefined) return null;
  return {
    pid,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    sid: Number(f[3]),
    start,
    zombie: f[0] === 'Z' || f[0] === 'X',
  };
}

export function procInfo(pid: number): ProcInfo | null {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return null;
  }
}

/** Every process visible in /proc (empty where there is no /proc). */
export function readProcs(): Map<number, ProcInfo> {
  const out = new Map<number, ProcInfo>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const info = procInfo(Number(entry));
    if (info) out.set(info.pid, info);
  }
  return out;
}

/**
 * The processes descending from the given ones (pid → start time; a pid whose start time differs was reused
 * and is skipped), found through /proc/<pid>/task/<tid>/children: a poll reads only the task's own tree, never
 * all of /proc.
 */
export function readTree(roots: Map<number, string>): Map<number, ProcInfo> {
  const out = new Map<number, ProcInfo>();
  const queue: number[] = [];
  for (const [pid, start] of roots) if (procInfo(pid)?.start === start) queue.push(pid);
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    if (out.has(pid)) continue;
    const info = procInfo(pid);
    if (!info) continue;
    out.set(pid, info);
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of threads) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1').split(' '))
          if (child) queue.push(Number(child));
      } catch {
        // the thread ended
      }
    }
  }
  return out;
}

/** The server's own process, session and group: never a task's, never killed. */
export const self = (() => {
  const me = procInfo(process.pid);
  return { pid: process.pid, sid: me?.sid ?? -1, pgrp: me?.pgrp ?? -1 };
})();

/**
 * What is known of a task's processes: pids with their start times, and the session and process-group ids they
 * were seen in (with the start time of the id's leader when it was alive, else null).
 */
export type Tracked = { known: Map<number, string>; ids: Map<number, string | null> };
export const emptyTracked = (): Tracked => ({ known: new Map(), ids: new Map() });

/**
 * The live processes of a task: its known processes (same pid and start time), every member of its sessions and
 * process groups that are verified still to be its own, and all their descendants. A session or group id counts
 * while its leader is the very process seen earlier (same start time) or while a known process still belongs to
 * it: the kernel never hands out a pid that is still some living process's session or group id, so a match
 * there is not a reused id. The server's own session and group are never taken as the task's (a known
 * process inside them still is), and the server itself is never included.
 */
export function membersOf(procs: Map<number, ProcInfo>, tracked: Tracked): ProcInfo[] {
  const verified = new Set<number>();
  for (const [id, leaderStart] of tracked.ids) {
    if (id === self.sid || id === self.pgrp) continue;
    if (leaderStart !== null && procs.get(id)?.start === leaderStart) verified.add(id);
  }
  const children = new Map<number, ProcInfo[]>();
  const seeds: ProcInfo[] = [];
  for (const p of procs.values()) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
    if (tracked.known.get(p.pid) === p.start) {
      seeds.push(p);
      for (const id of [p.sid, p.pgrp])
        if (tracked.ids.has(id) && id !== self.sid && id !== self.pgrp) verified.add(id);
    }
  }
  for (const p of procs.values()) if (verified.has(p.sid) || verified.has(p.pgrp)) seeds.push(p);
  const out = new Map<number, ProcInfo>();
  const queue = seeds;
  for (let p = queue.pop(); p; p = queue.pop()) {
    if (out.has(p.pid) || p.pid === self.pid) continue;
    out.set(p.pid, p);
    for (const c of children.get(p.pid) ?? []) queue.push(c);
  }
  return [...out.values()];
}

/**
 * Forgets what is gone: known processes no longer among `members`, and session and group ids no live member is
 * in (a dead process cannot be killed, and an id nobody holds any more could only be found again reused).
 */
export function forget(tracked: Tracked, members: ProcInfo[]): boolean {
  const live = new Set<number>();
  const ids = new Set<number>();
  for (const p of members) {
    if (p.zombie) continue;
    live.add(p.pid);
    ids.add(p.sid);
    ids.add(p.pgrp);
  }
  let changed = false;
  for (const pid of tracked.known.keys()) if (!live.has(pid)) changed = tracked.known.delete(pid) || changed;
  for (const id of tracked.ids.keys()) if (!ids.has(id)) changed = tracked.ids.delete(id) || changed;
  return changed;
}

/** Adds what `members` shows to `tracked`; true when anything new was learnt. */
export function learn(tracked: Tracked, members: ProcInfo[], procs: Map<number, ProcInfo>): boolean {
  let changed = false;
  for (const p of members) {
    if (p.zombie) continue;
    if (tracked.known.get(p.pid) !== p.start) {
      tracked.known.set(p.pid, p.start);
      changed = true;
    }
    for (const id of [p.sid, p.pgrp]) {
      if (id <= 1 || id === self.sid || id === self.pgrp || tracked.ids.has(id)) continue;
      tracked.ids.set(id, procs.get(id)?.start ?? null);
      changed = true;
    }
  }
  return changed;
}

/** SIGKILLs the live members; returns how many were signalled. */
export function killMembers(members: ProcInfo[], killed?: Set<number>): number {
  let n = 0;
  for (const p of members) {
    if (p.zombie) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
      n += 1;
      killed?.add(p.pid);
    } catch {
      // already gone
    }
  }
  return n;
}
