import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { recordEvent } from '../audit/audit.store';
import type { Config } from '../config';
import type { Db } from '../db';
import { logFailure, untilDbAnswers } from '../db/retry';
import type { SecretBox } from '../lib/crypto';
import { type Metrics, trackRun } from '../metrics/metrics';
import type { FinishedRun } from '../ports';
import { loadDetails } from './details';
import { runAnsible } from './executors/ansible';
import { runBash, runPowerShell, runPulumi, runPython } from './executors/shell';
import { runTerraform } from './executors/terraform';
import { checkoutRepository } from './git';
import { Job, loadTaskKey, Stopped, TaskFailed } from './job';
import type { LogSink } from './log-sink';
import type { ProcessAdapter } from './process';
import { findKey, findTask, updateTask } from './store';

type Decision = 'confirmed' | 'rejected' | 'stopped';

/** What a run needs from the engine that started it. */
export type RunContext = {
  db: Db;
  box: SecretBox;
  log: FastifyBaseLogger;
  config: Pick<Config, 'dataDir' | 'webRoot' | 'taskIsolation' | 'apps' | 'keyEnvPrefix' | 'keyFilesDir'>;
  processes: ProcessAdapter;
  metrics: Metrics;
  /** The instance id that marks the task's processes (orphan cleanup). */
  owner: string;
  /** A log sink for the task's output (the engine's output writer behind it). */
  openLog(projectId: number, taskId: number): LogSink;
  /** Saves one of the run's own status changes (see StatusUpdates.saveStatus), with its reason if given. */
  saveStatus(taskId: number, status: string, extra?: { message: string }): Promise<boolean>;
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

/** Runs the template's app with the binary and leading options the server's app registry gives it. */
async function dispatch(ctx: RunContext, job: Job) {
  const app = job.details.template.app || 'ansible';
  const registry = ctx.config.apps;
  if (!Object.hasOwn(registry, app)) throw new TaskFailed(`Unknown app ${app}`);
  const tool = registry[app as keyof typeof registry];
  switch (app) {
    case 'ansible':
      return runAnsible(job, { db: ctx.db, webRoot: ctx.config.webRoot, tool });
    case 'terraform':
    case 'tofu':
      return runTerraform(job, tool);
    case 'terragrunt':
      // Terragrunt drives the Terraform binary of the registry.
      return runTerraform(job, tool, { tfPath: registry.terraform.path });
    case 'bash':
      return runBash(job, tool);
    case 'powershell':
      return runPowerShell(job, tool);
    case 'python':
      return runPython(job, tool);
    case 'pulumi':
      return runPulumi(job, tool);
    default:
      throw new TaskFailed(`Unknown app ${app}`);
  }
}

/** Runs one claimed task (status `starting`) to its end: checkout, app, final status, cleanup. */
export function runTask(ctx: RunContext, id: number): RunHandle {
  let job: Job | null = null;
  let pendingStop: 'stop' | 'force' | null = null;
  let interruption: string | null = null;
  let decider: ((d: Decision) => void) | null = null;
  /**
   * Database work of the run that is safe to repeat (reads, updates to fixed values), tried again while the
   * database is unavailable: a dropped connection delays the task instead of failing it or leaving it unfinished.
   */
  const persist = <T>(what: string, work: () => Promise<T>) =>
    untilDbAnswers(work, { log: ctx.log, what, taskId: id, giveUp: ctx.closing });

  async function execute(): Promise<FinishedRun | null> {
    const task = await persist('reading the task', () => findTask(ctx.db, id));
    if (!task) return null;
    const tracked = trackRun(ctx.metrics, task.created);
    const dataDir = ctx.config.dataDir;
    const taskDir = join(dataDir, 'tasks', String(id));
    const sink = ctx.openLog(task.project_id, id);
    let final: 'success' | 'error' | 'stopped' = 'error';
    let templateType = '';
    try {
      rmSync(taskDir, { recursive: true, force: true });
      mkdirSync(taskDir, { recursive: true, mode: 0o700 });
      const details = await persist('reading the task details', () => loadDetails(ctx, task));
      templateType = details.template.type;
      tracked.start(details.template.app || 'ansible');
      sink.addSecrets([
        ...Object.values(details.secretVars),
        ...Object.values(details.secretEnv),
        ...Object.values(details.surveySecrets).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      ]);
      const home = join(dataDir, 'home', `project_${task.project_id}`);
      mkdirSync(home, { recursive: true, mode: 0o700 });
      const current = new Job(
        details,
        sink,
        ctx.processes,
        ctx.box,
        {
          task: taskDir,
          tmp: join(taskDir, 'tmp'),
          home,
          reposCache: join(dataDir, 'repos'),
          owner: ctx.owner,
          isolation: ctx.config.taskIsolation,
        },
        async (keyId) => {
          const row = await persist('reading a key', () => findKey(ctx.db, task.project_id, keyId));
          if (!row) return null;
          const key = await loadTaskKey(ctx.box, ctx.config, row);
          sink.addSecrets([key.password, key.passphrase, key.private_key]);
          return key;
        },
        async (status) => {
          await ctx.saveStatus(id, status);
        },
        async () => {
          current.throwIfStopped();
          // The answer is listened for before the status says so: a confirm sent the moment a client sees
          // waiting_confirmation must find the runner ready for it.
          const answered = new Promise<Decision>((resolve) => {
            decider = resolve;
          });
          await ctx.saveStatus(id, 'waiting_confirmation');
          sink.line('Waiting for confirmation of the plan');
          if (current.stopRequested) decider?.('stopped');
          const decision = await answered;
          decider = null;
          if (decision === 'stopped') throw new Stopped();
          if (decision === 'confirmed') {
            sink.line('Plan confirmed');
            await ctx.saveStatus(id, 'confirmed');
            await ctx.saveStatus(id, 'running');
          } else {
            sink.line('Plan rejected');
            await ctx.saveStatus(id, 'rejected');
          }
          return decision;
        },
      );
      job = current;
      current.onStop(() => decider?.('stopped'));
      if (pendingStop) current.requestStop(pendingStop === 'force');
      sink.line(`Started: ${id}`);
      sink.line(`Run TaskRunner with template: ${details.template.name}`);

      const repo = details.repository;
      if (repo) {
        const co = await checkoutRepository(current, repo, {
          branch: task.git_branch || details.template.git_branch || repo.git_branch || '',
          commitHash: task.commit_hash,
          target: join(taskDir, 'repo'),
        });
        current.repoDir = co.dir;
        details.task.commit_hash = task.commit_hash ?? co.hash;
        details.task.commit_message = co.message;
      } else {
        current.repoDir = taskDir;
      }
      current.throwIfStopped();
      await persist('saving the commit', () =>
        updateTask(ctx.db, id, {
          commit_hash: details.task.commit_hash,
          commit_message: details.task.commit_message,
        }),
      );
      await ctx.saveStatus(id, 'running');
      current.throwIfStopped();
      await dispatch(ctx, current);
      final = 'success';
    } catch (err) {
      if (err instanceof Stopped || job?.stopRequested || pendingStop) {
        final = 'stopped';
      } else {
        final = 'error';
        if (err instanceof TaskFailed) sink.line(err.message);
        else {
          ctx.log.error({ err, taskId: id }, 'task failed with an internal error');
          sink.line('The task failed with an internal error (see the server log)');
        }
      }
    }
    // Ended from outside (the server shutting down): said as the last line, and an error with that reason.
    const reason = final === 'stopped' ? interruption : null;
    if (reason) sink.line(reason);
    await sink.close();
    // Clean up before the final status is visible: a finished task has nothing left on disk.
    rmSync(taskDir, { recursive: true, force: true });
    // If the database stays unavailable past the retry cap this throws, and the engine's sweep ends the task.
    const saved = reason
      ? await ctx.saveStatus(id, 'error', { message: reason })
      : await ctx.saveStatus(id, final);
    if (!saved && final !== 'stopped') await ctx.saveStatus(id, 'stopped');
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
    stop(force) {
      if (job) job.requestStop(force);
      else pendingStop = force ? 'force' : (pendingStop ?? 'stop');
    },
    interrupt(message) {
      // A run someone already asked to stop ends as stopped, as they asked.
      if (!job?.stopRequested && !pendingStop) interruption = message;
      handle.stop(true);
    },
    decide(decision) {
      if (!decider) return false;
      const answer = decider;
      decider = null;
      answer(decision);
      return true;
    },
    done: Promise.resolve(null),
  };
  handle.done = execute();
  return handle;
}
