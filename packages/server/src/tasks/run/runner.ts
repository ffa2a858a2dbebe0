import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { recordEvent } from '../../audit/audit.store';
import type { Config } from '../../config';
import type { Db } from '../../db';
import { logFailure, untilDbAnswers } from '../../db/retry';
import type { SecretBox } from '../../lib/crypto';
import { type Metrics, trackRun } from '../../metrics/metrics';
import type { FinishedRun } from '../../ports';
import type { LogSink } from '../output/log-sink';
import { serverConfinement } from '../sandbox/confinement';
import type { ProcessAdapter } from '../sandbox/process';
import { dropTaskCredential } from '../state-credentials.store';
import { findKey, findRepository, findTask, updateTask } from '../store';
import { sealSecretOutputs } from '../task-view';
import { recordApplyOf, saveDrift, saveTaskPlan } from '../terraform-plans.store';
import { loadDetails } from './details';
import { loadTaskKey } from './job';
import { reposCacheOf } from './repository-caches';
import { RunControl, runCore } from './run-core';

/** What a run's status change may save with it. */
type StatusFields = { message?: string; commit_hash?: string | null; commit_message?: string | null };

/** What a run needs from the engine that started it. */
export type RunContext = {
  db: Db;
  box: SecretBox;
  log: FastifyBaseLogger;
  config: Pick<
    Config,
    | 'dataDir'
    | 'dbUrl'
    | 'webRoot'
    | 'host'
    | 'port'
    | 'taskIsolation'
    | 'taskSandbox'
    | 'taskSandboxBwrap'
    | 'taskSandboxPaths'
    | 'taskUser'
    | 'taskOutputLimitMb'
    | 'apps'
    | 'keyEnvPrefix'
    | 'keyFilesDir'
  >;
  processes: ProcessAdapter;
  metrics: Metrics;
  /** The instance id that marks the task's processes (orphan cleanup). */
  owner: string;
  /** A log sink for the task's output (the engine's output writer behind it). */
  openLog(projectId: number, taskId: number): LogSink;
  /**
   * Saves one of the run's own status changes (see StatusUpdates.saveStatus), with its reason and the commit the run
   * checked out if given.
   */
  saveStatus(taskId: number, status: string, extra?: StatusFields): Promise<boolean>;
  /** True once the engine is closing: database work stops being retried. */
  closing(): boolean;
};

export type RunHandle = {
  /** The finished run (null when its task was gone), once everything of the run is done. */
  done: Promise<FinishedRun | null>;
  where: { project_id: number; template_id: number };
  stop(force: boolean): void;
  /**
   * Kills the run at once and ends its task as error with `message` as its reason and last output line (as
   * stopped if a stop was already asked for).
   */
  interrupt(message: string): void;
  /** Delivers a confirm/reject answer; false when nothing is waiting for one. */
  decide(decision: 'confirmed' | 'rejected'): boolean;
};

/** The server's own address, for tasks on this machine when no public URL (SIGNALBOX_WEB_ROOT) is set. */
function ownAddress(config: Pick<Config, 'host' | 'port'>) {
  const anyHost = ['0.0.0.0', '::', ''].includes(config.host);
  const host = anyHost ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/** Runs one claimed task (status `starting`) to its end: checkout, app, final status, cleanup. */
export function runTask(ctx: RunContext, id: number): RunHandle {
  const control = new RunControl();
  /**
   * Database work of the run that is safe to repeat (reads, updates to fixed values), tried again while the
   * database is unavailable: a dropped connection delays the task instead of failing it or leaving it unfinished.
   */
  const persist = <T>(what: string, work: () => Promise<T>) =>
    untilDbAnswers(work, { log: ctx.log, what, taskId: id, giveUp: ctx.closing });

  /** The commit the run checked out, saved with its next status change (the move to running) by one statement. */
  let commit: Pick<StatusFields, 'commit_hash' | 'commit_message'> | null = null;
  const saveStatus = async (status: string, extra?: { message: string }) => {
    const saved = await ctx.saveStatus(id, status, commit ? { ...commit, ...extra } : extra);
    if (saved) commit = null;
    return saved;
  };

  async function execute(): Promise<FinishedRun | null> {
    const task = await persist('reading the task', () => findTask(ctx.db, id));
    if (!task) return null;
    const tracked = trackRun(ctx.metrics, task.created);
    const dataDir = ctx.config.dataDir;
    const sink = ctx.openLog(task.project_id, id);
    let templateType = '';
    const final = await runCore(
      {
        taskId: id,
        log: ctx.log,
        internalErrorLine: 'The task failed with an internal error (see the server log)',
        processes: ctx.processes,
        apps: ctx.config.apps,
        webRoot: ctx.config.webRoot,
        stateUrl: ctx.config.webRoot || ownAddress(ctx.config),
        isolation: ctx.config.taskIsolation,
        confinement: serverConfinement(ctx.config),
        outputLimit: ctx.config.taskOutputLimitMb * 1_048_576,
        owner: ctx.owner,
        dirs: {
          task: join(dataDir, 'tasks', String(id)),
          home: join(dataDir, 'home', `project_${task.project_id}`),
          reposCache: reposCacheOf(dataDir),
        },
        sink,
        loadDetails: () => persist('reading the task details', () => loadDetails(ctx, task)),
        async findKey(projectId, keyId) {
          const row = await persist('reading a key', () => findKey(ctx.db, projectId, keyId));
          return row ? loadTaskKey(ctx.box, ctx.config, row) : null;
        },
        findInventoryRepository: async (projectId, repositoryId) =>
          (await findRepository(ctx.db, projectId, repositoryId)) ?? null,
        saveCommit: async (hash, message) => {
          commit = { commit_hash: hash, commit_message: message };
        },
        saveOutputs: (outputs) =>
          persist('saving the outputs', () => updateTask(ctx.db, id, { outputs: JSON.stringify(outputs) })),
        saveSecretOutputs: (outputs) =>
          persist('saving the secret outputs', () =>
            updateTask(ctx.db, id, { secret_outputs: sealSecretOutputs((t) => ctx.box.seal(t), outputs) }),
          ),
        savePlan: (summary, facts) =>
          persist('saving the plan', () =>
            saveTaskPlan(ctx.db, ctx.box, { id, project_id: task.project_id }, summary, facts),
          ),
        saveDrift: (report) =>
          persist('saving the drift check', () =>
            saveDrift(ctx.db, { id, project_id: task.project_id, template_id: task.template_id }, report),
          ),
        beforeSuccess: () => persist('recording the apply', () => recordApplyOf(ctx.db, id)),
        saveStatus,
      },
      control,
      {
        onDetails(details) {
          templateType = details.template.type;
          tracked.start(details.template.app || 'ansible');
        },
      },
    );
    // The run's state backend credentials end with it (a finished task's would be refused anyway).
    await dropTaskCredential(ctx.db, id).catch((err) =>
      logFailure(ctx.log, err, 'forgetting the task credentials failed', { taskId: id }),
    );
    // If the database stays unavailable past the retry cap saving the final status throws (above), and the
    // engine's sweep ends the task.
    const end = await persist('reading the task', () => findTask(ctx.db, id));
    tracked.finish(end?.status ?? final);
    // One attempt: an insert whose answer was lost may have been stored, and a second would duplicate it.
    await recordEvent(ctx.db, {
      project_id: task.project_id,
      user_id: task.user_id,
      object_type: 'task',
      object_id: id,
      description: `Task ID ${id} finished: ${end?.status ?? final}`,
      kind: 'task.finished',
      params: { task_id: id, status: end?.status ?? final },
    }).catch((err) => logFailure(ctx.log, err, 'recording the task event failed', { taskId: id }));
    if (!end) return null;
    return {
      taskId: id,
      projectId: task.project_id,
      templateId: task.template_id,
      userId: task.user_id,
      status: end.status,
      templateType,
      giveUp: ctx.closing,
    };
  }

  const handle: RunHandle = {
    where: { project_id: 0, template_id: 0 },
    stop: (force) => control.stop(force),
    interrupt: (message) => control.interrupt(message),
    decide: (decision) => control.decide(decision),
    done: Promise.resolve(null),
  };
  handle.done = execute();
  return handle;
}
