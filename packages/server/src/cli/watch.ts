import type { Project, TaskWithTemplate } from '@signalbox/contracts';
import type { Api } from './api';
import { exitCodeOf, followTask } from './follow';
import { type Terminal, terminalSafe } from './terminal';

/** What a task is doing, for the spinner. */
function doing(task: TaskWithTemplate): string {
  const id = `Task ${task.id}`;
  switch (task.status) {
    case 'waiting':
      return `${id} is queued${task.status_detail ? `: ${terminalSafe(task.status_detail)}` : ''}`;
    case 'waiting_approval':
      return `${id} waits for a person to approve it (signalbox approve ${task.id})`;
    case 'waiting_confirmation':
      return `${id} waits for its plan to be confirmed in the console`;
    default:
      return `${id} is ${task.status}`;
  }
}

/** The hint to see a task again, with its project (task ids are reached through their project). */
export const taskHint = (project: Project, taskId: number) =>
  `signalbox task ${taskId} --project ${project.id}`;

/**
 * Waits for a task to end, streaming its log with `follow`, and answers the exit code of its status. Log lines go
 * to stdout as stored (made safe for a terminal when one shows them), what happens to people on stderr; with
 * --json, stdout is JSON Lines: `{"type":"line",…}` per log line and `{"type":"task","task":…}` at each status
 * change, the last one the task as it ended. Ctrl-C stops following, not the task.
 */
export async function watchTask(
  api: Api,
  term: Terminal,
  project: Project,
  task: TaskWithTemplate,
  { follow }: { follow: boolean },
): Promise<number> {
  const onInterrupt = () => {
    term.stopSpinning();
    if (!term.json)
      process.stderr.write(
        `Stopped following. Task ${task.id} keeps running (signalbox stop ${task.id} --project ${project.id} stops it)\n`,
      );
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  let status = '';
  term.spin(doing(task));
  try {
    const ended = await followTask(api, project.id, task.id, {
      line: !follow
        ? undefined
        : term.json
          ? (line) => term.jsonOut({ type: 'line', ...line })
          : (line) => term.out(term.interactive ? terminalSafe(line.output) : line.output),
      task: (now) => {
        if (now.status === status) return;
        status = now.status;
        if (term.json && follow) term.jsonOut({ type: 'task', task: now });
        term.spin(doing(now));
      },
    });
    term.stopSpinning();
    if (term.json && !follow) term.jsonOut(ended);
    else if (!term.json) {
      const why =
        (ended.status === 'rejected' || ended.status === 'error') && ended.message
          ? `: ${terminalSafe(ended.message)}`
          : '';
      const line = `Task ${ended.id} ended: ${ended.status}${why}`;
      if (follow) term.say(line);
      else term.out(line);
    }
    return exitCodeOf(ended.status);
  } finally {
    term.stopSpinning();
    process.off('SIGINT', onInterrupt);
  }
}
