import { logFailure } from '../../db/retry';
import { toBool } from '../../db/values';
import { trackRun } from '../../metrics/metrics';
import { runnerClose } from '../../runner-protocol/protocol';
import { sealFor } from '../../runner-protocol/seal';
import { liveRunners } from '../../tasks/queue/instances.store';
import type { RunnerSlots } from '../../tasks/queue/placement';
import { loadDetails } from '../../tasks/run/details';
import { type Key, loadTaskKey, TaskFailed } from '../../tasks/run/job';
import { activeTasks, findKey, findRepository, findTask, type TaskRow } from '../../tasks/store';
import type { JobPayload } from '../payload';
import {
  connectedRunners,
  databaseIso,
  releaseRunnersOf,
  runnerInstances,
  silentRunners,
  slotStatuses,
  tagsOf,
  tasksOfDeletedRunners,
  tasksOfRunner,
} from './runners.store';

import { type RemoteState, runnerLostMessage, runnerUnregisteredMessage } from './state';

// Giving work to runners: the queue's view of their slots, a claimed task sent as a sealed job, and the sweep that
// ends the tasks of runners silent past the lost timeout.

/** The task's details and every key it may use, with the values its output must never show. */
export async function buildPayload(
  s: RemoteState,
  task: TaskRow,
): Promise<{ payload: JobPayload; secrets: string[]; app: string; type: string }> {
  const { ctx } = s;
  const { db } = s.ctx;
  const details = await loadDetails(ctx, task);
  const inventoryRepository = details.inventory?.repository_id
    ? ((await findRepository(db, task.project_id, details.inventory.repository_id)) ?? null)
    : null;
  const keyIds = new Set<number>();
  for (const id of [
    details.inventory?.ssh_key_id,
    details.inventory?.become_key_id,
    details.repository?.ssh_key_id,
    details.template.vault_key_id,
    inventoryRepository?.ssh_key_id,
  ])
    if (id) keyIds.add(id);
  const keys: Record<string, Key> = {};
  const secrets: string[] = [
    ...Object.values(details.secretVars),
    ...Object.values(details.secretEnv),
    ...(details.stateBackend ? [details.stateBackend.password] : []),
    ...Object.values(details.surveySecrets).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
  ];
  for (const id of keyIds) {
    const row = await findKey(db, task.project_id, id);
    if (!row) continue;
    const key = await loadTaskKey(ctx.box, ctx.config, row);
    keys[String(id)] = key;
    secrets.push(key.password, key.passphrase, key.private_key);
  }
  return {
    payload: { details, keys, inventory_repository: inventoryRepository },
    secrets,
    app: details.template.app || 'ansible',
    type: details.template.type,
  };
}

/** Gives a claimed task (status starting, this runner's) to the runner: its sealed payload in a `job`. */
export function launch(
  s: RemoteState,
  task: { id: number; project_id: number; template_id: number },
  runnerId: number,
) {
  const { ctx, conns, remote } = s;
  const { db, log } = s.ctx;
  const conn = conns.get(runnerId);
  const placeholder = { ...task, user_id: null, created: new Date().toISOString() };
  if (!conn) {
    void s.requeue(task.id);
    return;
  }
  const run = s.track(conn, placeholder, 0);
  void (async () => {
    try {
      const row = await findTask(db, task.id);
      if (!row) return s.forget(run, null);
      run.userId = row.user_id;
      run.created = row.created;
      run.tracked = trackRun(ctx.metrics, row.created);
      const built = await buildPayload(s, row);
      run.sink.addSecrets(built.secrets);
      run.templateType = built.type;
      run.tracked.start(built.app);
      if (run.conn.closed || remote.get(task.id) !== run) return s.requeue(task.id);
      s.send(run.conn, {
        type: 'job',
        task_id: task.id,
        payload: sealFor(conn.runner.public_key, JSON.stringify(built.payload)),
      });
    } catch (err) {
      const message =
        err instanceof TaskFailed
          ? err.message
          : 'The task failed with an internal error (see the server log)';
      if (!(err instanceof TaskFailed)) log.error({ err, taskId: task.id }, 'preparing a remote job failed');
      await ctx.status.interrupt({ id: task.id, project_id: task.project_id, status: 'starting' }, message);
      s.forget(run, null);
    }
  })();
}

/**
 * The runners as the queue sees them: those connected to any instance, with their slots taken. Only greeted
 * connections of this instance can be given work.
 */
export async function slots(s: RemoteState): Promise<RunnerSlots[]> {
  const { conns } = s;
  const { db, instanceId } = s.ctx;
  const rows = await connectedRunners(db);
  if (!rows.length) return [];
  const load = new Map<number, number>();
  for (const t of await activeTasks(db))
    if (t.remote_runner_id && slotStatuses.includes(t.status))
      load.set(t.remote_runner_id, (load.get(t.remote_runner_id) ?? 0) + 1);
  const t = Date.now();
  return rows.map((r) => {
    const conn = conns.get(r.id);
    const mine = r.instance_id === instanceId && !!conn?.greeted && !conn.closed;
    return {
      id: r.id,
      name: r.name,
      project_id: r.project_id,
      tags: tagsOf(r),
      active: toBool(r.active),
      // The owner's setting, lowered to what the runner offers.
      max: mine && conn ? Math.min(r.max_parallel_tasks, conn.offer) : r.max_parallel_tasks,
      load: load.get(r.id) ?? 0,
      draining: mine && !!conn?.draining,
      here: mine && !!conn && !conn.draining && conn.coolUntil <= t,
    };
  });
}

/**
 * Runners silent past the lost timeout: their tasks end as error (back to the queue if never begun), and a
 * connection of theirs here is dropped. Connections recorded for instances that are gone show offline.
 */
export async function sweep(s: RemoteState) {
  const { ctx, conns } = s;
  const { db, log, instanceId } = s.ctx;
  if (s.sweeping || ctx.closing()) return;
  s.sweeping = true;
  try {
    const live = await liveRunners(ctx, ctx.staleMs);
    await releaseRunnersOf(
      db,
      (await runnerInstances(db)).filter((id) => id !== instanceId && !live.has(id)),
    );
    const before = await databaseIso(ctx, -ctx.config.runnerLostTimeout * 1000);
    for (const runner of await silentRunners(db, before)) {
      const conn = conns.get(runner.id);
      if (conn) s.close(conn, { code: 1001, reason: 'Runner lost' });
      for (const task of await tasksOfRunner(db, runner.id))
        if (task.status === 'starting') await s.requeue(task.id);
        else await s.endTask(task, runnerLostMessage(runner.name));
    }
    for (const task of await tasksOfDeletedRunners(db))
      if (task.status === 'starting') await s.requeue(task.id);
      else await s.endTask(task, runnerUnregisteredMessage);
  } catch (err) {
    logFailure(log, err, 'looking for lost runners failed');
  } finally {
    s.sweeping = false;
  }
}

/** A runner was unregistered: its connection here closes, its running tasks end, its claimed ones wait again. */
export async function unregistered(s: RemoteState, runnerId: number) {
  const { conns } = s;
  const { db } = s.ctx;
  const conn = conns.get(runnerId);
  if (conn) s.close(conn, runnerClose.unauthorized);
  for (const task of await tasksOfRunner(db, runnerId))
    if (task.status === 'starting') await s.requeue(task.id);
    else await s.endTask(task, runnerUnregisteredMessage);
}
