import type { WebSocket } from 'ws';
import { logFailure } from '../../db/retry';
import { connect } from './connections';
import { launch, slots, sweep, unregistered } from './dispatch';
import { type RemoteRunnerRow, releaseRunnersOf } from './runners.store';
import { type RemoteRunnersContext, RemoteState } from './state';

export {
  runnerDroppedMessage,
  runnerLostMessage,
  runnerRestartedMessage,
  runnerUnregisteredMessage,
} from './state';

export type RemoteRunners = ReturnType<typeof createRemoteRunners>;

/**
 * The remote runners connected to this instance and the tasks they run. Each task given to a runner has a run
 * handle in the engine's `runs` (stop, confirm and reject reach the runner as `control` messages, also when asked
 * on another instance through task.control); its output batches are stored in order exactly once (task.runner_seq)
 * and its end is saved once every batch is. A closed connection is not a lost runner: its tasks stay as they are
 * until the runner reconnects (to any instance) and is given them back, or until it stays silent past
 * SIGNALBOX_RUNNER_LOST_TIMEOUT.
 */
export function createRemoteRunners(ctx: RemoteRunnersContext) {
  const s = new RemoteState(ctx);
  const { db, log, instanceId } = ctx;
  const { conns, remote } = s;
  return {
    connect: (socket: WebSocket, runner: RemoteRunnerRow) => connect(s, socket, runner),
    launch: (task: { id: number; project_id: number; template_id: number }, runnerId: number) =>
      launch(s, task, runnerId),
    slots: () => slots(s),
    sweep: () => sweep(s),
    unregistered: (runnerId: number) => unregistered(s, runnerId),
    isRemote: (taskId: number) => remote.has(taskId),
    /** Connections this instance's previous process held are gone. */
    async start() {
      await releaseRunnersOf(db, [instanceId]);
    },
    /** Closes every runner connection; the runners' tasks go on and are given back when they reconnect. */
    async close() {
      for (const conn of [...conns.values()]) s.close(conn, { code: 1001, reason: 'Server shutting down' });
      await Promise.allSettled([...remote.values()].map((r) => r.sink.close()));
      await releaseRunnersOf(db, [instanceId]).catch((err) =>
        logFailure(log, err, 'marking runners offline failed'),
      );
    },
    /** How many runners are connected here (tests). */
    connected: () => conns.size,
  };
}
