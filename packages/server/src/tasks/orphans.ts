import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills processes a previous server process left behind for the given tasks. Every task process carries
 * SIGNALBOX_TASK_ID and SIGNALBOX_TASK_OWNER (the instance id: SIGNALBOX_INSTANCE_ID or a hash of the data dir)
 * in its environment, so only processes of this instance's interrupted tasks are matched — never an unrelated
 * process that reused a pid.
 */
export function killOrphans(owner: string, taskIds: Set<number>): number {
  let killed = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    // Whole variables only: an instance id may be a prefix of another's (SIGNALBOX_INSTANCE_ID=a and =ab).
    const vars = environ.split('\0');
    if (!vars.includes(`SIGNALBOX_TASK_OWNER=${owner}`)) continue;
    const id = vars.find((v) => v.startsWith('SIGNALBOX_TASK_ID='));
    if (!id || !taskIds.has(Number(id.slice('SIGNALBOX_TASK_ID='.length)))) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed += 1;
    } catch {
      // already gone
    }
  }
  return killed;
}
