/*
 * Which remote runner a waiting task goes to, without I/O: the queue hands it the runners some instance holds a
 * connection of, with their load, and gets back a runner of this instance, or why the task waits.
 */

/** A connected runner as the queue sees it. */
export type RunnerSlots = {
  id: number;
  /** Named in why a task waits (a disabled runner). */
  name?: string;
  /** null: a global runner. */
  project_id: number | null;
  tags: readonly string[];
  active: boolean;
  max: number;
  /** Its tasks that take a slot (starting, running, waiting for or past a confirmation). */
  load: number;
  /** This instance holds its connection (only this instance may give it work). */
  here: boolean;
  /** It is shutting down: it takes no new task (known to the instance holding its connection). */
  draining?: boolean;
};

export type Placement =
  | { place: 'server' }
  | { place: 'runner'; runnerId: number }
  /** No runner can take it now: `reason` is its status_detail. */
  | { place: 'wait'; reason: string }
  /** A runner of another instance can take it: that instance claims it. */
  | { place: 'elsewhere' };

/** A task's required runner tag: its template's, else its inventory's; empty means none. */
export const requiredTag = (
  templateTag: string | null | undefined,
  inventoryTag: string | null | undefined,
) => templateTag?.trim() || inventoryTag?.trim() || null;

/** Whether a task with this tag runs on a remote runner (with `useRemoteRunner` every task does). */
export const runsRemotely = (tag: string | null, useRemoteRunner: boolean) => tag !== null || useRemoteRunner;

/**
 * Where a task goes: an enabled runner of its project or a global one carrying its tag (any runner when it has
 * none), with a free slot; project runners first, then the least loaded, then the oldest.
 */
export function placeTask(
  task: { project_id: number },
  tag: string | null,
  useRemoteRunner: boolean,
  runners: readonly RunnerSlots[],
): Placement {
  if (!runsRemotely(tag, useRemoteRunner)) return { place: 'server' };
  const which = tag === null ? 'runner' : `runner with tag "${tag}"`;
  const matching = runners.filter(
    (r) =>
      (r.project_id === null || r.project_id === task.project_id) &&
      (tag === null || r.tags.includes(tag)) &&
      !r.draining,
  );
  const fitting = matching.filter((r) => r.active);
  if (!fitting.length) {
    // Online but disabled: said so, rather than offline.
    const disabled = matching.map((r) => r.name ?? `#${r.id}`);
    if (disabled.length === 1) return { place: 'wait', reason: `Waiting: runner ${disabled[0]} is disabled` };
    if (disabled.length > 1)
      return { place: 'wait', reason: `Waiting: runners ${disabled.join(', ')} are disabled` };
    return { place: 'wait', reason: `Waiting: no ${which} is online` };
  }
  const free = fitting.filter((r) => r.load < r.max);
  if (!free.length) return { place: 'wait', reason: `Waiting: every ${which} is busy` };
  const here = free.filter((r) => r.here);
  if (!here.length) return { place: 'elsewhere' };
  here.sort(
    (a, b) => Number(a.project_id === null) - Number(b.project_id === null) || a.load - b.load || a.id - b.id,
  );
  return { place: 'runner', runnerId: (here[0] as RunnerSlots).id };
}
