import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';
import type { Db, Dialect } from './db';
import type { SecretBox } from './lib/crypto';
import type { EventBus } from './live/bus';
import type { Metrics } from './metrics/metrics';
import type { Scheduler, StartTask, StartWorkflow, TaskEngine } from './ports';

/** What the engines are built from (configuration, database, secret box, log, event bus, metrics); `Deps` adds them. */
export type CoreDeps = Readonly<{
  config: Config;
  db: Db;
  dialect: Dialect;
  box: SecretBox;
  log: FastifyBaseLogger;
  bus: EventBus;
  /** This app's Prometheus registry and the metrics recorded into it. */
  metrics: Metrics;
}>;

/**
 * Everything a service needs, built once in app.ts (the composition root), frozen, and passed explicitly; a
 * service takes the slice it uses (`Pick<Deps, 'db' | 'bus'>`).
 */
export type Deps = CoreDeps &
  Readonly<{
    /** The task engine (queue + runners). */
    tasks: TaskEngine;
    /** Cron schedules; schedule and template routes call refresh() after a change. */
    scheduler: Scheduler;
    /** Validates, stores and queues a new task (the tasks feature's service, for the scheduler and integrations). */
    startTask: StartTask;
    /** Starts a workflow run (the workflows feature's service, for the scheduler and integrations). */
    startWorkflow: StartWorkflow;
  }>;
