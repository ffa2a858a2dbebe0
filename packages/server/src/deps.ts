import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';
import type { Db, Dialect } from './db';
import type { SecretBox } from './lib/crypto';
import type { EventBus } from './live/bus';
import type { Scheduler, StartTask, TaskEngine } from './ports';

/** Everything a service needs, built once in app.ts (the composition root) and passed explicitly. */
export type Deps = {
  config: Config;
  db: Db;
  dialect: Dialect;
  box: SecretBox;
  log: FastifyBaseLogger;
  bus: EventBus;
  /** The task engine (queue + runners). */
  tasks: TaskEngine;
  /** Cron schedules; schedule and template routes call refresh() after a change. */
  scheduler: Scheduler;
  /** Validates, stores and queues a new task (the tasks feature's service, for the scheduler and integrations). */
  startTask: StartTask;
};
