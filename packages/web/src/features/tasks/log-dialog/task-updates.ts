import type { TaskUpdateMessage } from '@signalbox/contracts';
import { type QueryClient, useQuery } from '@tanstack/react-query';
import { api } from '../../../api/client';
import { type Task, taskKeys } from '../api';

/**
 * How far along a task is: a status never goes back to a lower rank, except a confirmed task running again (both
 * rank alike, so the later of the two is kept by whichever arrives last from the server).
 */
const ranks: Record<string, number> = {
  waiting_approval: 0,
  waiting: 1,
  starting: 2,
  running: 3,
  confirmed: 3,
  waiting_confirmation: 4,
  rejected: 5,
  stopping: 6,
  stopped: 7,
  success: 7,
  error: 7,
};
export const statusRank = (status: string) => ranks[status] ?? -1;

/** The task fields an `update` message carries, as they go into the task. */
function updateFields(m: TaskUpdateMessage): Partial<Task> {
  const fields: Partial<Task> & Record<string, unknown> = {
    status: m.status,
    start: m.start,
    end: m.end,
    version: m.version,
  };
  for (const key of ['message', 'commit_hash', 'commit_message', 'status_detail'] as const)
    if (key in m) fields[key] = m[key] as never;
  return fields;
}

/**
 * The task with a live `update` applied, unless the task already holds a later status (a snapshot read after
 * the update was sent). An update as far along as the task wins: its times and details are the current ones.
 */
export function mergeTaskUpdate(task: Task, m: TaskUpdateMessage | undefined): Task {
  if (!m || m.task_id !== task.id) return task;
  if (statusRank(m.status) < statusRank(task.status)) return task;
  return { ...task, ...updateFields(m) };
}

/** The last `update` seen for each task, so a snapshot that answers after it cannot put an older status back. */
const latest = new Map<number, TaskUpdateMessage>();

/** Forgets the updates seen (tests). */
export const forgetTaskUpdates = () => latest.clear();

/** GET tasks/{id}, merged with the last live update seen for the task. */
export async function fetchTask(projectId: number, taskId: number): Promise<Task> {
  const task = await api<Task>(`/project/${projectId}/tasks/${taskId}`);
  return mergeTaskUpdate(task, latest.get(taskId));
}

/** A task as the log dialog shows it: read from the server, kept in step by applyTaskUpdate. */
export const useTask = (projectId: number, taskId: number) =>
  useQuery({
    queryKey: taskKeys.task(projectId, taskId),
    queryFn: () => fetchTask(projectId, taskId),
    retry: false,
  });

/**
 * Applies a live `update` to the cached task and reads the task again. A read already on its way may have read the
 * row before this change, and a query without data yet would join that read rather than start over: it is
 * cancelled first, so the task on screen always ends at the stored status (the row is saved before the update is
 * sent).
 */
export async function applyTaskUpdate(
  client: QueryClient,
  projectId: number,
  taskId: number,
  m: TaskUpdateMessage,
) {
  if (m.task_id !== taskId) return;
  // The socket delivers a task's updates in order: the last one is the newest.
  latest.set(taskId, m);
  const queryKey = taskKeys.task(projectId, taskId);
  client.setQueryData<Task>(queryKey, (old) => (old ? mergeTaskUpdate(old, m) : old));
  await client.cancelQueries({ queryKey });
  await client.invalidateQueries({ queryKey });
}
