import { withoutNul } from '../../lib/line-intake';
import type { OutputRow } from '../../tasks/output/output-rows';

/**
 * A runner's output lines as rows of the task: masked again with the task's secrets, a NUL shown as U+FFFD (as on
 * the server), each time in the server's own ISO form (a time that does not parse is the server's now). Lines of a
 * batch mostly share a few times: each distinct one is parsed once.
 */
export function runnerRows(
  taskId: number,
  lines: readonly { time: string; output: string }[],
  secrets: { mask(text: string): string },
): OutputRow[] {
  let lastIn = '';
  let lastOut = '';
  return lines.map((line) => {
    const output = withoutNul(secrets.mask(line.output));
    if (line.time !== lastIn) {
      const ms = Date.parse(line.time);
      lastIn = line.time;
      lastOut = new Date(Number.isFinite(ms) ? ms : Date.now()).toISOString();
    }
    return { task_id: taskId, time: lastOut, output };
  });
}
