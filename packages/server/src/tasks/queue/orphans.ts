import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sweepTaskCgroups } from '../sandbox/isolation';
import { emptyTracked, readProcs } from '../sandbox/proc-table';
import { readSessionRecord, sweepTracked } from '../sandbox/session-sandbox';

/**
 * Kills processes a previous server process left behind for the given tasks, or for every task (`'all'`, at
 * start: whoever has since ended those tasks), wherever they hide:
 * - in the tasks' cgroups (cgroup isolation): everything in them, then the cgroups are removed;
 * - by environment: every task process is started with SIGNALBOX_TASK_ID and SIGNALBOX_TASK_OWNER (the
 *   instance id), so only this instance's tasks are matched, never an unrelated process that reused a pid;
 * - by session and group (session isolation): those the previous process recorded in each task's directory,
 *   and those of the matched processes and of their descendants (a child that cleared its environment).
 * `dataDir` locates the task directories.
 */
export function killOrphans(owner: string, taskIds: Set<number> | 'all', dataDir: string): number {
  const mine = (id: number) => taskIds === 'all' || taskIds.has(id);
  let killed = sweepTaskCgroups(owner, taskIds);
  const tracked = emptyTracked();
  for (const p of readProcs().values()) {
    if (p.pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${p.pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    // Whole variables only: an instance id may be a prefix of another's (SIGNALBOX_INSTANCE_ID=a and =ab).
    const vars = environ.split('\0');
    if (!vars.includes(`SIGNALBOX_TASK_OWNER=${owner}`)) continue;
    const id = vars.find((v) => v.startsWith('SIGNALBOX_TASK_ID='));
    if (!id || !mine(Number(id.slice('SIGNALBOX_TASK_ID='.length)))) continue;
    tracked.known.set(p.pid, p.start);
  }
  if (dataDir) {
    for (const id of taskIds === 'all' ? taskFolders(dataDir) : taskIds) {
      const record = readSessionRecord(join(dataDir, 'tasks', String(id)), owner);
      if (!record) continue;
      for (const [pid, start] of record.known) tracked.known.set(pid, start);
      for (const [sid, start] of record.ids) tracked.ids.set(sid, start);
    }
  }
  killed += sweepTracked(tracked);
  return killed;
}

/** The ids of the task folders in the data directory's `tasks` folder. */
export function taskFolders(dataDir: string): number[] {
  try {
    return readdirSync(join(dataDir, 'tasks'))
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}
