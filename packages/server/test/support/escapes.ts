import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownCgroup } from '../../src/tasks/sandbox/isolation';
import { gitRepo } from './task-fixtures';

/**
 * A task grandchild that leaves the task's session and clears its environment: `setsid env -i sleep <n>`,
 * started from a subshell that then exits, so the sleep is not even a descendant of the task any more. In
 * session mode the script waits until the server has recorded the sleep (the fallback's documented limit: a
 * process that escapes and loses its parent between two polls is never seen). Then `escape-and-wait.sh` keeps
 * running and `escape-and-exit.sh` ends the task.
 */
const escapeScript = `( setsid env -i sleep "$1" &
  pid=$!
  # Escaped for real only once env has become sleep (setsid comes before that).
  until [ "$(tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null)" = "sleep $1 " ]; do sleep 0.01; done
  echo "escaped $pid"
  if [ "$2" = session ]; then
    until grep -q "\\[$pid," "\${TMPDIR%/tmp}/sessions.json" 2>/dev/null; do sleep 0.02; done
  fi
  echo recorded )
`;

export const escapeRepo = () =>
  gitRepo({
    'escape-and-wait.sh': `${escapeScript}sleep 1000\n`,
    'escape-and-exit.sh': `${escapeScript}exit 0\n`,
  });

/** A number no other test sleeps for: the escaped process is `sleep <n>`. */
export const uniqueSleep = () => 3_000_000 + Math.floor(Math.random() * 1_000_000);

/** Pids of live processes running exactly `sleep <n>`. */
export function sleepers(n: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1') !== `sleep\0${n}\0`) continue;
      if (/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${entry}/stat`, 'latin1'))) continue;
      out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Kills what a failed test may have left (never anything else: only `sleep <n>` of our numbers). */
export function killSleepers(ns: number[]) {
  for (const n of ns)
    for (const pid of sleepers(n)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
}

/** The cgroup v2 directory of a process, or null. */
export function cgroupOf(pid: number): string | null {
  try {
    return /^0::(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Where this instance's task cgroups live (null without a usable cgroup v2). */
export function instanceCgroup(owner: string): string | null {
  const own = ownCgroup();
  return 'dir' in own ? join(own.dir, `signalbox-${owner}`) : null;
}
