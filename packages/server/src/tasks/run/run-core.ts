import { existsSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { DriftReport, PlanSummary } from '@signalbox/contracts';
import type { AppRegistry } from '../../lib/apps';
import { runAnsible } from '../executors/ansible';
import { runBash, runPowerShell, runPulumi, runPython } from '../executors/shell';
import { runTerraform } from '../executors/terraform';
import { type Confinement, handOver } from '../sandbox/confinement';
import type { ProcessAdapter } from '../sandbox/process';
import type { IsolationSetting } from '../sandbox/sandbox';
import type { RepositoryRow } from '../store';
import type { PlanFacts } from '../terraform-plans.store';
import { checkoutRepository } from './git';
import { Job, type JobDetails, type Key, lostOutputMessage, Stopped, TaskFailed, type TaskLog } from './job';
import { outputsPath, readTaskOutputs, secretOutputsPath, type TaskOutputs } from './outputs';

export type { TaskLog };

export type FinalStatus = 'success' | 'error' | 'stopped';
type Decision = 'confirmed' | 'rejected' | 'stopped';

/**
 * What one run needs from whoever runs it — the server (database, SecretBox) or a remote runner (a sealed job
 * payload) — so both run a task with the same code: checkout, app, status changes, confirmation, stop, cleanup.
 */
export type RunCore = {
  taskId: number;
  /** Where internal errors are logged (never with secrets). */
  log: { error(obj: object, msg: string): void };
  /** Said as the task's last line when the run fails with an internal error. */
  internalErrorLine: string;
  processes: ProcessAdapter;
  apps: AppRegistry;
  webRoot: string;
  /**
   * Where the run's processes reach this server's API (the built-in Terraform state backend): a runner's server
   * URL, the server's public URL or its own listening address. Unset: webRoot.
   */
  stateUrl?: string;
  isolation: IsolationSetting;
  /** What the run's processes can see (resolved once at start). */
  confinement: Confinement;
  /** Bytes of output the task may print (0: no limit): past it the task is stopped and ends as error. */
  outputLimit: number;
  /** The id that marks the run's processes (orphan cleanup). */
  owner: string;
  /**
   * task: the task's own folder (made empty at the start, removed at the end); home: HOME of its tools kept
   * between the project's tasks when they run unconfined (a confined task's HOME is in its own folder, so nothing
   * one task writes there is read by a later one).
   */
  dirs: { task: string; home: string; reposCache: string };
  sink: TaskLog;
  /** The task's details; a failure here fails the task like any other. */
  loadDetails(): Promise<JobDetails>;
  /** An access key with its secret, by id (null when there is none). */
  findKey(projectId: number, keyId: number): Promise<Key | null>;
  /** The repository of a file inventory kept in another repository. */
  findInventoryRepository(projectId: number, repositoryId: number): Promise<RepositoryRow | null>;
  /** Keeps the commit the run checked out (with the status change that follows, or on its own). */
  saveCommit(hash: string | null, message: string | null): Promise<void>;
  /**
   * Keeps the outputs the task published (SIGNALBOX_OUTPUTS), before its final status is saved; absent: the run
   * does not offer SIGNALBOX_OUTPUTS.
   */
  saveOutputs?(outputs: TaskOutputs): Promise<void>;
  /**
   * Keeps the summary of the task's saved Terraform/OpenTofu plan with its file's facts (the file itself for a
   * plan-only task), before it waits for confirmation.
   */
  savePlan(summary: PlanSummary, facts: PlanFacts): Promise<void>;
  /** Keeps what a drift check found. */
  saveDrift(report: DriftReport): Promise<void>;
  /** Called just before a run's success is saved (the server records an apply it made); absent: nothing. */
  beforeSuccess?(): Promise<void>;
  /**
   * Keeps the secret outputs the task published (SIGNALBOX_SECRET_OUTPUTS), sealed; absent: the run does not offer
   * SIGNALBOX_SECRET_OUTPUTS.
   */
  saveSecretOutputs?(outputs: TaskOutputs): Promise<void>;
  /** Saves a status change; false when it was not taken (e.g. the task was already ended). */
  saveStatus(status: string, extra?: { message: string }): Promise<boolean>;
};

/**
 * The controls of a run from outside: stop (before or after the job exists), interruption and the answer to a
 * plan confirmation.
 */
export class RunControl {
  job: Job | null = null;
  pendingStop: 'stop' | 'force' | null = null;
  interruption: string | null = null;
  decider: ((d: Decision) => void) | null = null;

  stop(force: boolean) {
    if (this.job) this.job.requestStop(force);
    else this.pendingStop = force ? 'force' : (this.pendingStop ?? 'stop');
  }

  /** Kills the run at once; it ends as error with `message` (as stopped if a stop was already asked for). */
  interrupt(message: string) {
    if (!this.job?.stopRequested && !this.pendingStop) this.interruption = message;
    this.stop(true);
  }

  /** Delivers a confirm/reject answer; false when nothing is waiting for one. */
  decide(decision: 'confirmed' | 'rejected'): boolean {
    if (!this.decider) return false;
    const answer = this.decider;
    this.decider = null;
    answer(decision);
    return true;
  }
}

/**
 * `sink` taking at most `limit` bytes of output (0: no limit): the line that would pass it is not stored, nor any
 * after it, and `exceeded` is told once, with the reason the task ends with.
 */
export function limitOutput(sink: TaskLog, limit: number, exceeded: (message: string) => void): TaskLog {
  if (!limit) return sink;
  let taken = 0;
  let over = false;
  return {
    line(text) {
      if (over) return;
      taken += Buffer.byteLength(text) + 1;
      if (taken <= limit) return sink.line(text);
      over = true;
      exceeded(`The task printed more than ${formatBytes(limit)} of output (its limit): it was stopped`);
    },
    pressure: () => sink.pressure(),
    onDrain: (callback) => sink.onDrain(callback),
    addSecrets: (values) => sink.addSecrets(values),
    mask: (text) => sink.mask(text),
    watch: (listener) => sink.watch(listener),
    close: () => sink.close(),
    get lost() {
      return sink.lost;
    },
  };
}

const formatBytes = (n: number) => (n % 1_048_576 === 0 ? `${n / 1_048_576} MiB` : `${n} bytes`);

/** Runs the template's app with the binary and leading options of the app registry. */
async function dispatch(core: RunCore, job: Job) {
  const app = job.details.template.app || 'ansible';
  const registry = core.apps;
  if (!Object.hasOwn(registry, app)) throw new TaskFailed(`Unknown app ${app}`);
  const tool = registry[app as keyof typeof registry];
  // The server's configuration names the binary (SIGNALBOX_APPS): a confined task sees that file, wherever it is
  // (a missing one stays missing, and the command fails as it would outside).
  if (job.confined) {
    for (const path of app === 'terragrunt' ? [tool.path, registry.terraform.path] : [tool.path])
      if (isAbsolute(path) && existsSync(path)) job.share(path);
  }
  switch (app) {
    case 'ansible':
      return runAnsible(job, {
        inventoryRepository: (id) => core.findInventoryRepository(job.details.project.id, id),
        webRoot: core.webRoot,
        tool,
      });
    case 'terraform':
    case 'tofu':
      return runTerraform(job, tool, { stateUrl: core.stateUrl ?? core.webRoot });
    case 'terragrunt':
      // Terragrunt drives the Terraform binary of the registry.
      return runTerraform(job, tool, {
        tfPath: registry.terraform.path,
        stateUrl: core.stateUrl ?? core.webRoot,
      });
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

/**
 * Saves the checked-out commit and the move to running once the work under way settles: the run's first command is
 * handed to its launcher by then (a script's start goes through no I/O), so the statements and the update published
 * to every watcher take place while its process starts, not before it. A move that cannot be saved (the database gone
 * past its retries) interrupts the run, which ends as error.
 */
function markRunning(
  core: RunCore,
  control: RunControl,
  task: { commit_hash: string | null; commit_message: string | null },
): Promise<void> {
  const saved = new Promise<void>((resolve, reject) =>
    setImmediate(() => {
      core
        .saveCommit(task.commit_hash, task.commit_message)
        .then(() => core.saveStatus('running'))
        .then(() => resolve(), reject);
    }),
  );
  saved.catch((err) => {
    core.log.error({ err, taskId: core.taskId }, 'saving the move to running failed');
    control.interrupt(core.internalErrorLine);
  });
  return saved;
}

/**
 * Runs one task to its end and returns its final status, already saved through `core.saveStatus` (an
 * interruption saves `error` with its reason). The task folder is gone and the output delivered before that.
 */
export async function runCore(
  core: RunCore,
  control: RunControl,
  hooks: { onDetails?(details: JobDetails): void } = {},
): Promise<FinalStatus> {
  const id = core.taskId;
  const taskDir = core.dirs.task;
  const sink = limitOutput(core.sink, core.outputLimit, (message) => control.interrupt(message));
  let final: FinalStatus = 'error';
  /** The status message of a failure that says its own reason (TaskFailed's `reason`). */
  let failureReason: string | null = null;
  /** The move to running (with the commit), saved while the first command starts; see markRunning. */
  let marked: Promise<void> = Promise.resolve();
  /** Every later status change of the run comes after the move to running, whether that was saved or failed. */
  const saveStatus = async (status: string, extra?: { message: string }) => {
    await marked.catch(() => {});
    return core.saveStatus(status, extra);
  };
  try {
    // What an earlier run left (a crash), removed off the event loop, as at the end: a directory's removal can take
    // tens of ms on a busy disk. Usually there is none, and the start does not wait for the thread pool for it.
    if (existsSync(taskDir)) await rm(taskDir, { recursive: true, force: true });
    mkdirSync(taskDir, { recursive: true, mode: 0o700 });
    const details = await core.loadDetails();
    hooks.onDetails?.(details);
    sink.addSecrets([
      ...Object.values(details.secretVars),
      ...Object.values(details.secretEnv),
      ...(details.stateBackend ? [details.stateBackend.password] : []),
      ...Object.values(details.surveySecrets).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    ]);
    const home = core.confinement.mode === 'bwrap' ? join(taskDir, 'home') : core.dirs.home;
    mkdirSync(home, { recursive: true, mode: 0o700 });
    handOver(core.confinement, taskDir);
    if (core.confinement.mode === 'bwrap') handOver(core.confinement, home);
    const current = new Job(
      details,
      sink,
      core.processes,
      {
        task: taskDir,
        tmp: join(taskDir, 'tmp'),
        home,
        reposCache: core.dirs.reposCache,
        owner: core.owner,
        isolation: core.isolation,
        confinement: core.confinement,
        outputs: core.saveOutputs ? outputsPath(taskDir) : null,
        secretOutputs: core.saveSecretOutputs ? secretOutputsPath(taskDir) : null,
      },
      async (keyId) => {
        const key = await core.findKey(details.project.id, keyId);
        if (key) sink.addSecrets([key.password, key.passphrase, key.private_key]);
        return key;
      },
      async (status) => {
        await saveStatus(status);
      },
      async () => {
        current.throwIfStopped();
        // The answer is listened for before the status says so: a confirm sent the moment a client sees
        // waiting_confirmation must find the runner ready for it.
        const answered = new Promise<Decision>((resolve) => {
          control.decider = resolve;
        });
        await saveStatus('waiting_confirmation');
        sink.line('Waiting for confirmation of the plan');
        if (current.stopRequested) control.decider?.('stopped');
        const decision = await answered;
        control.decider = null;
        if (decision === 'stopped') throw new Stopped();
        if (decision === 'confirmed') {
          sink.line('Plan confirmed');
          await saveStatus('confirmed');
          await saveStatus('running');
        } else {
          // No `rejected` status on the way: it is a finished one (an agent's run declined), and passing through it
          // would end the task (its end time, its secret, its queue slot) while its run still cleans up. The run
          // ends as an error saying the plan was rejected.
          sink.line('Plan rejected');
        }
        return decision;
      },
      (summary, facts) => core.savePlan(summary, facts),
      (report) => core.saveDrift(report),
    );
    control.job = current;
    current.onStop(() => control.decider?.('stopped'));
    if (control.pendingStop) current.requestStop(control.pendingStop === 'force');
    sink.line(`Task ${id} started`);
    sink.line(`Run TaskRunner with template: ${details.template.name}`);

    const task = details.task;
    const repo = details.repository;
    if (repo) {
      const co = await checkoutRepository(current, repo, {
        branch: task.git_branch || details.template.git_branch || repo.git_branch || '',
        commitHash: task.commit_hash,
        target: join(taskDir, 'repo'),
      });
      current.repoDir = co.dir;
      task.commit_hash = task.commit_hash ?? co.hash;
      task.commit_message = co.message;
    } else {
      current.repoDir = taskDir;
    }
    current.throwIfStopped();
    marked = markRunning(core, control, task);
    try {
      await dispatch(core, current);
    } finally {
      // A run is not over while its move to running is still being saved (a failure to save it stopped the run).
      await marked.catch(() => {});
    }
    await marked; // a move to running that could not be saved failed the run
    final = 'success';
  } catch (err) {
    if (err instanceof Stopped || control.job?.stopRequested || control.pendingStop) {
      final = 'stopped';
    } else {
      final = 'error';
      if (err instanceof TaskFailed) {
        sink.line(err.message);
        failureReason = err.reason ?? null;
      } else {
        core.log.error({ err, taskId: id }, 'task failed with an internal error');
        sink.line(core.internalErrorLine);
      }
    }
  }
  // What the task published, read before its folder goes (said in the log when it cannot be taken).
  let outputs: TaskOutputs | null = null;
  let secretOutputs: TaskOutputs | null = null;
  if (core.saveOutputs && control.job) {
    try {
      outputs = readTaskOutputs(taskDir, (line) => sink.line(line));
    } catch (err) {
      core.log.error({ err, taskId: id }, 'reading the task outputs failed');
    }
  }
  if (core.saveSecretOutputs && control.job) {
    try {
      secretOutputs = readTaskOutputs(taskDir, (line) => sink.line(line), 'secret');
    } catch (err) {
      core.log.error({ err, taskId: id }, 'reading the task secret outputs failed');
    }
  }
  // Ended from outside (the server shutting down), or a failure with its own reason: said as the last line, and
  // an error with that reason as its message.
  let reason = final === 'stopped' ? control.interruption : final === 'error' ? failureReason : null;
  // Past the output limit only this line is still taken.
  if (reason) core.sink.line(reason);
  await sink.close();
  // Output that could not be stored: said as the last line, and a run that succeeded ends as error with that reason.
  if (sink.lost) {
    const lost = lostOutputMessage(sink.lost);
    core.sink.line(lost);
    await sink.close();
    if (final === 'success') reason = lost;
  }
  // Clean up before the final status is visible: a finished task has nothing left on disk. Off the event loop: on
  // an overlay file system under load, removing a task's folder took 27 ms a task, holding every other request.
  await rm(taskDir, { recursive: true, force: true });
  if (outputs && Object.keys(outputs).length > 0) {
    // Outputs that cannot be kept (the database gone meanwhile) never keep the task from its final status.
    try {
      await core.saveOutputs?.(outputs);
    } catch (err) {
      core.log.error({ err, taskId: id }, 'keeping the task outputs failed');
    }
  }
  if (secretOutputs && Object.keys(secretOutputs).length > 0) {
    try {
      await core.saveSecretOutputs?.(secretOutputs);
    } catch (err) {
      core.log.error({ err, taskId: id }, 'keeping the task secret outputs failed');
    }
  }
  if (!reason && final === 'success' && core.beforeSuccess) {
    try {
      await core.beforeSuccess();
    } catch (err) {
      core.log.error({ err, taskId: id }, 'recording what the task did failed');
    }
  }
  const saved = reason ? await saveStatus('error', { message: reason }) : await saveStatus(final);
  if (!saved && final !== 'stopped') await saveStatus('stopped');
  return reason ? 'error' : final;
}
