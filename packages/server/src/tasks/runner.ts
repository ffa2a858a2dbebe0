import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { recordEvent } from '../audit/audit.store';
import { logFailure, untilDbAnswers } from '../db/retry';
import type { Deps } from '../deps';
import { loadDetails } from './details';
import type { Engine } from './engine';
import { runAnsible } from './executors/ansible';
import { runBash, runPulumi } from './executors/shell';
import { runTerraform } from './executors/terraform';
import { checkoutRepository } from './git';
import { decodeKey, Job, Stopped, TaskFailed } from './job';
import { LogSink } from './log-sink';
import type { ProcessAdapter } from './process';
import { autorunTemplates, findKey, findTask, updateTask } from './store';

type Decision = 'confirmed' | 'rejected' | 'stopped';

export type RunHandle = {
  done: Promise<void>;
  where: { project_id: number; template_id: number };
  stop(force: boolean): void;
  /** Delivers a confirm/reject answer; false when nothing is waiting for one. */
  decide(decision: 'confirmed' | 'rejected'): boolean;
};

async function dispatch(deps: Deps, job: Job) {
  const app = job.details.template.app || 'ansible';
  switch (app) {
    case 'ansible':
      return runAnsible(job, { db: deps.db, webRoot: deps.config.webRoot });
    case 'terraform':
    case 'tofu':
      return runTerraform(job);
    case 'bash':
      return runBash(job);
    case 'pulumi':
      return runPulumi(job);
    default:
      throw new TaskFailed(`Unknown app ${app}`);
  }
}

/** Runs one claimed task (status `starting`) to its end: checkout, app, final status, cleanup, autorun. */
export function runTask(
  deps: Deps,
  engine: Engine,
  processes: ProcessAdapter,
  id: number,
  owner: string,
): RunHandle {
  let job: Job | null = null;
  let pendingStop: 'stop' | 'force' | null = null;
  let decider: ((d: Decision) => void) | null = null;
  /**
   * Database work of the run that is safe to repeat (reads, updates to fixed values), tried again while the
   * database is unavailable: a dropped connection delays the task instead of failing it or leaving it unfinished.
   */
  const persist = <T>(what: string, work: () => Promise<T>) =>
    untilDbAnswers(work, { log: deps.log, what, taskId: id, giveUp: () => engine.closing });

  async function execute() {
    const task = await persist('reading the task', () => findTask(deps.db, id));
    if (!task) return;
    const dataDir = deps.config.dataDir;
    const taskDir = join(dataDir, 'tasks', String(id));
    const sink = new LogSink(deps, task.project_id, id, { giveUp: () => engine.closing });
    let final: 'success' | 'error' | 'stopped' = 'error';
    let templateType = '';
    try {
      rmSync(taskDir, { recursive: true, force: true });
      mkdirSync(taskDir, { recursive: true, mode: 0o700 });
      const details = await persist('reading the task details', () => loadDetails(deps, task));
      templateType = details.template.type;
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
        processes,
        deps.box,
        {
          task: taskDir,
          tmp: join(taskDir, 'tmp'),
          home,
          reposCache: join(dataDir, 'repos'),
          owner,
          isolation: deps.config.taskIsolation,
        },
        async (keyId) => {
          const row = await persist('reading a key', () => findKey(deps.db, task.project_id, keyId));
          if (!row) return null;
          const key = decodeKey(deps.box, row);
          sink.addSecrets([key.password, key.passphrase, key.private_key]);
          return key;
        },
        async (status) => {
          await engine.saveStatus(id, status);
        },
        async () => {
          current.throwIfStopped();
          await engine.saveStatus(id, 'waiting_confirmation');
          sink.line('Waiting for confirmation of the plan');
          const decision = await new Promise<Decision>((resolve) => {
            decider = resolve;
            if (current.stopRequested) resolve('stopped');
          });
          decider = null;
          if (decision === 'stopped') throw new Stopped();
          if (decision === 'confirmed') {
            sink.line('Plan confirmed');
            await engine.saveStatus(id, 'confirmed');
            await engine.saveStatus(id, 'running');
          } else {
            sink.line('Plan rejected');
            await engine.saveStatus(id, 'rejected');
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
        updateTask(deps.db, id, {
          commit_hash: details.task.commit_hash,
          commit_message: details.task.commit_message,
        }),
      );
      await engine.saveStatus(id, 'running');
      current.throwIfStopped();
      await dispatch(deps, current);
      final = 'success';
    } catch (err) {
      if (err instanceof Stopped || job?.stopRequested || pendingStop) {
        final = 'stopped';
      } else {
        final = 'error';
        if (err instanceof TaskFailed) sink.line(err.message);
        else {
          deps.log.error({ err, taskId: id }, 'task failed with an internal error');
          sink.line('The task failed with an internal error (see the server log)');
        }
      }
    }
    await sink.close();
    // Clean up before the final status is visible: a finished task has nothing left on disk.
    rmSync(taskDir, { recursive: true, force: true });
    // If the database stays unavailable past the retry cap this throws, and the engine's sweep ends the task.
    const saved = await engine.saveStatus(id, final);
    if (!saved && final !== 'stopped') await engine.saveStatus(id, 'stopped');
    const end = await persist('reading the task', () => findTask(deps.db, id));
    // One attempt: an insert whose answer was lost may have been stored, and a second would duplicate it.
    await recordEvent(deps.db, {
      project_id: task.project_id,
      user_id: task.user_id,
      object_type: 'task',
      object_id: id,
      description: `Task ID ${id} finished: ${end?.status ?? final}`,
    }).catch((err) => logFailure(deps.log, err, 'recording the task event failed', { taskId: id }));
    if (end?.status === 'success' && templateType === 'build') {
      const templates = await persist('reading autorun templates', () =>
        autorunTemplates(deps.db, task.project_id, task.template_id),
      );
      for (const t of templates) {
        try {
          await engine.create(
            task.project_id,
            { template_id: t.id, build_task_id: id },
            { userId: task.user_id },
          );
        } catch (err) {
          deps.log.warn({ err, taskId: id, templateId: t.id }, 'autorun deploy could not start');
        }
      }
    }
  }

  const handle: RunHandle = {
    where: { project_id: 0, template_id: 0 },
    stop(force) {
      if (job) job.requestStop(force);
      else pendingStop = force ? 'force' : (pendingStop ?? 'stop');
    },
    decide(decision) {
      if (!decider) return false;
      const answer = decider;
      decider = null;
      answer(decision);
      return true;
    },
    done: Promise.resolve(),
  };
  handle.done = execute();
  return handle;
}
