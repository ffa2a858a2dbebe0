/*
 * The interfaces the engines (task queue, scheduler) offer to features, and the task-start function features
 * offer back to the engines. Both sides import them from here, so neither imports the other.
 */

import type { TaskSource } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { WebSocket } from 'ws';
import type { Db } from './db';
import type { RemoteRunnerTable } from './db/tables';
/** What callers (API, scheduler, integrations, autorun) give to start a task; field names follow the REST API. */
export type NewTask = {
  template_id: number;
  message?: string;
  build_task_id?: number | null;
  debug?: boolean;
  dry_run?: boolean;
  diff?: boolean;
  /** JSON array text of extra CLI arguments (honoured only when the template allows overriding). */
  arguments?: string | null;
  /** JSON object text merged over the environment's extra variables. */
  environment?: string;
  /** JSON object text of secret survey values: stored encrypted, removed when the task ends. */
  secret?: string;
  git_branch?: string | null;
  inventory_id?: number | null;
  /** Another environment of the project than the template's (only when the template allows it). */
  environment_id?: number | null;
  limit?: string | string[] | null;
  tags?: string[] | null;
  skip_tags?: string[] | null;
  playbook?: string | null;
  /** App-specific parameters (e.g. terraform plan/destroy/auto_approve). */
  params?: Record<string, unknown>;
};

export type TaskOrigin = {
  userId: number | null;
  integrationId?: number | null;
  scheduleId?: number | null;
  /** Re-runs and new-commit schedules pin a commit. */
  commitHash?: string | null;
  /**
   * The caller holds manageProjectResources (manager, owner, admin): it may change the playbook (when the
   * template allows overrides), pass any CLI option and set Ansible's own variables. Absent means false, as for
   * schedules, integrations and autoruns.
   */
  canEditTemplates?: boolean;
  /** A re-run of this task: its overrides were checked when it was created and are kept. */
  rerunOf?: number | null;
  /** Applies the stored plan of this plan-only task (checked and approved by the caller) instead of planning. */
  planOf?: number | null;
  /**
   * A person asked for it through the API: a required survey variable it leaves unanswered (with no default) is
   * refused with a 400. Schedules, integrations and autoruns have no one to ask: such a task is stored and its run
   * fails, saying which variable had no value.
   */
  interactive?: boolean;
  /** How the task was started (stored with it); a task started through MCP may wait for approval. */
  source?: TaskSource;
  /** The API token that asked for it (named in its audit event, and never allowed to approve it). */
  token?: { id: string; name: string } | null;
  /**
   * A workflow run's template node starts it: the task names the run and node, and `claim` runs in the transaction
   * that stores the task. It throws when the node was started meanwhile (by another instance): then no task is
   * stored, so a node never starts two tasks.
   */
  workflow?: { runId: number; nodeId: string; claim: (trx: Db, taskId: number) => Promise<void> } | null;
};

/**
 * Validates a new task (AppError 400/403/404 on bad input), stores it as `waiting` and hands it to the task
 * engine. Returns the task id.
 */
export type StartTask = (projectId: number, input: NewTask, origin: TaskOrigin) => Promise<number>;

/**
 * Starts a run of a workflow for a schedule or an integration (no person: survey defaults fill what `survey` leaves
 * unanswered). Returns the run id.
 */
export type StartWorkflow = (
  projectId: number,
  workflowId: number,
  survey: Record<string, unknown>,
  origin: {
    source: 'schedule' | 'integration';
    scheduleId?: number;
    integrationId?: number;
    message?: string;
  },
) => Promise<number>;

/** A run that has ended, as the engine reports it to whoever reacts to finished tasks (autorun). */
export type FinishedRun = {
  taskId: number;
  projectId: number;
  templateId: number;
  userId: number | null;
  /** The stored final status. */
  status: string;
  /** The template's type when the run started ('build', 'deploy' or ''). */
  templateType: string;
  /** True once the engine is closing: database reads stop being retried. */
  giveUp(): boolean;
};

/** The task engine as the rest of the server sees it: it queues and runs stored tasks. */
export interface TaskEngine {
  /** Announces a task just stored as `waiting` and wakes the queue. */
  enqueue(taskId: number): Promise<void>;
  /** Starts the queue: reconciles tasks left unfinished by a previous process, then runs waiting ones. */
  start(): Promise<void>;
  /** Stops accepting work and ends running tasks (after a drain in progress, if one was begun). */
  close(): Promise<void>;
  /**
   * The graceful half of a shutdown: claims no more tasks, lets the running ones finish for up to `graceMs`, then
   * ends the rest as interrupted by the server shutdown. Resolves once no run is left.
   */
  drain(graceMs: number): Promise<void>;
  /** Started and neither draining nor closed: it claims and runs tasks. */
  isRunning(): boolean;
  /** Stops a task: `force` kills at once; otherwise `stopping`, SIGTERM, then SIGKILL after a grace period. */
  stop(projectId: number, taskId: number, force: boolean): Promise<void>;
  /** Answers a Terraform/OpenTofu plan waiting for confirmation. */
  confirm(projectId: number, taskId: number): Promise<void>;
  reject(projectId: number, taskId: number): Promise<void>;
  /** Moves a task waiting for approval to the queue; false when it was not waiting for approval. */
  approve(taskId: number): Promise<boolean>;
  /** Ends a task waiting for approval as `rejected` with `reason` as its message; false when it was not waiting. */
  decline(taskId: number, reason: string): Promise<boolean>;
  /** Why a waiting task waits (e.g. "Waiting: project limit of 2 running tasks reached"), or null. */
  statusDetail(taskId: number): string | null;
  /** The remote runners connected to this instance. */
  readonly runners: RunnerLink;
  /** What this instance's tasks can see (SIGNALBOX_TASK_SANDBOX as resolved at start), and why when not bwrap. */
  sandbox(): { mode: 'bwrap' | 'off' | 'refused'; reason?: string };
}

/** The task engine's side of the remote-runner routes. */
export interface RunnerLink {
  /** Takes an accepted runner socket whose token named this runner. */
  connect(socket: WebSocket, runner: Selectable<RemoteRunnerTable>): void;
  /** The runner was deleted: its connection closes, its running tasks end as error, its claimed ones wait again. */
  unregistered(runnerId: number): Promise<void>;
}

/** Cron schedules; schedule and template changes call refresh(). */
export interface Scheduler {
  start(): Promise<void>;
  refresh(): Promise<void>;
  close(): Promise<void>;
}
