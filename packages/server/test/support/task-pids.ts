import { readFileSync } from 'node:fs';
import { type ProcInfo, readProcs } from '../../src/tasks/sandbox/proc-table';

/** The pid numbers /proc/<pid>/status lists for a process, outermost first (one when it is in no child namespace). */
function nsPids(pid: number): number[] {
  try {
    const line = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? '';
    return line.split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The host pid of the process of task `taskId` that printed `printed` as its own pid (`$$`, `$!`, os.getpid()):
 * in a confined task that is its pid in the task's PID namespace, unconfined the same number. Only this test
 * process's own descendants count, so tasks of other test files with the same id and numbers are never taken.
 */
export function hostPid(taskId: number, printed: number): number | undefined {
  const procs = readProcs();
  const mine = (pid: number) => startedHere(procs, pid);
  for (const p of procs.values()) {
    if (p.zombie || nsPids(p.pid).at(-1) !== printed || !mine(p.pid)) continue;
    try {
      if (
        readFileSync(`/proc/${p.pid}/environ`, 'latin1').split('\0').includes(`SIGNALBOX_TASK_ID=${taskId}`)
      )
        return p.pid;
    } catch {
      // it ended meanwhile
    }
  }
  return undefined;
}

/**
 * The host pids of the processes a task's output names by lines `<prefix><pid>` (e.g. "child 12", "main 3"),
 * once every prefix has a line and every named process is found; else undefined.
 */
export function hostPidsOf(taskId: number, lines: string[], prefixes: string[]): number[] | undefined {
  const pids: number[] = [];
  for (const prefix of prefixes) {
    const line = lines.find((l) => l.startsWith(prefix));
    const pid = line === undefined ? undefined : hostPid(taskId, Number(line.slice(prefix.length).trim()));
    if (pid === undefined) return undefined;
    pids.push(pid);
  }
  return pids;
}

/** Whether `pid` descends from this test process (it, or something it started, started it). */
function startedHere(procs: Map<number, ProcInfo>, pid: number): boolean {
  for (let p = procs.get(pid); p && p.pid > 1; p = procs.get(p.ppid)) if (p.ppid === process.pid) return true;
  return false;
}

/**
 * The command lines (arguments joined by spaces) of the running processes this test process started, directly
 * or not: what a test looks at instead of every process of the machine, where other programs may match.
 */
export function descendantArgs(): string[] {
  const procs = readProcs();
  const args: string[] = [];
  for (const p of procs.values()) {
    if (p.zombie || !startedHere(procs, p.pid)) continue;
    try {
      args.push(readFileSync(`/proc/${p.pid}/cmdline`, 'latin1').split('\0').join(' ').trim());
    } catch {
      // it ended meanwhile
    }
  }
  return args;
}
