import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/*
 * The Prometheus metrics of one app. Every app builds its own registry (tests build many apps in one process, so
 * nothing goes to prom-client's global registry); the engines and routes record into it through `Deps.metrics`.
 * Label values are fixed vocabularies (route patterns, task apps and statuses, channel names): never a raw URL,
 * an alias, a user or a secret.
 */

/** Where the gauges read at scrape time come from (the task engine sets it when it is built). */
export type TaskCounts = {
  /** Tasks waiting in the queue (the database: every instance's queue is the same). */
  waiting(): Promise<number>;
  /** Runs in this instance's pool. */
  running(): number;
};

export type Metrics = ReturnType<typeof createMetrics>;

const durationBuckets = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600];

/** Process and event-loop metrics are facts about the process: one registry for it, however many apps it holds. */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    // collectDefaultMetrics starts an event-loop delay monitor and a GC observer that are never stopped: once per
    // process, not once per app.
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export function createMetrics() {
  const registry = new Registry();
  const registers = [registry];
  let taskCounts: TaskCounts | null = null;
  let socketCount: (() => number) | null = null;
  let auditQueued: (() => Partial<Record<string, number>>) | null = null;
  let workflowRunCounts: (() => Promise<Record<string, number>>) | null = null;

  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => new Histogram<L>({ name, help, labelNames, buckets, registers });

  const metrics = {
    registry,
    httpDuration: histogram(
      'signalbox_http_request_duration_seconds',
      'HTTP request duration by method, route pattern and status code',
      ['method', 'route', 'status_code'],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
    tasksStarted: counter('signalbox_tasks_started_total', 'Task runs started on this instance, by app', [
      'app',
    ]),
    tasksFinished: counter(
      'signalbox_tasks_finished_total',
      'Task runs finished on this instance, by app and final status',
      ['app', 'status'],
    ),
    taskDuration: histogram(
      'signalbox_task_duration_seconds',
      'Duration of task runs on this instance (claimed to final status), by app',
      ['app'],
      durationBuckets,
    ),
    queueWait: histogram(
      'signalbox_task_queue_wait_seconds',
      'Time tasks waited in the queue (created to claimed by a runner), by app',
      ['app'],
      [0.1, 0.5, ...durationBuckets],
    ),
    outputLines: counter('signalbox_task_output_lines_total', 'Task output lines stored'),
    schedulerFires: counter(
      'signalbox_scheduler_ticks_fired_total',
      'Schedule ticks whose timer fired on this instance (each is then claimed by one instance)',
    ),
    schedulerMisses: counter(
      'signalbox_scheduler_ticks_missed_total',
      'Schedule ticks skipped because their time had passed when the timer ran (a blocked event loop)',
    ),
    webhookDeliveries: counter(
      'signalbox_webhook_deliveries_total',
      'Integration webhook requests by result (started, ignored, unauthorized, not_found)',
      ['result'],
    ),
    alertSends: counter('signalbox_alert_sends_total', 'Alert sends by channel and result (sent, failed)', [
      'channel',
      'result',
    ]),
    workflowRunsFinished: counter(
      'signalbox_workflow_runs_finished_total',
      'Workflow runs that ended, by final status (success, failed, stopped, rejected), counted by the instance that ended them',
      ['status'],
    ),
    workflowRunsStarted: counter(
      'signalbox_workflow_runs_started_total',
      'Workflow runs started, by source',
      ['source'],
    ),
    workflowApprovalWait: histogram(
      'signalbox_workflow_approval_wait_seconds',
      'Time workflow approval nodes waited for a decision, by outcome (approved, rejected, timed_out)',
      ['outcome'],
      [1, 10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600],
    ),
    auditForwarded: counter(
      'signalbox_audit_events_forwarded_total',
      'Audit events delivered to an audit receiver, by receiver (webhook, syslog)',
      ['sink'],
    ),
    auditDropped: counter(
      'signalbox_audit_events_dropped_total',
      "Audit events dropped because a receiver's queue was full, by receiver (webhook, syslog)",
      ['sink'],
    ),
    /** The audit forwarder tells where the queue gauge reads from. */
    watchAuditQueues(queued: () => Partial<Record<string, number>>) {
      auditQueued = queued;
    },
    /** The engine tells where the task gauges read from. */
    watchTasks(counts: TaskCounts) {
      taskCounts = counts;
    },
    /** The workflow engine tells where the runs-by-status gauge reads from. */
    watchWorkflowRuns(counts: () => Promise<Record<string, number>>) {
      workflowRunCounts = counts;
    },
    /** The socket route tells where the client gauge reads from. */
    watchSockets(count: () => number) {
      socketCount = count;
    },
    /** The text exposition of this app's metrics and the process's. */
    async exposition(): Promise<string> {
      return `${await processMetrics().metrics()}\n${await registry.metrics()}`;
    },
    contentType: registry.contentType,
  };

  new Gauge({
    name: 'signalbox_tasks_waiting',
    help: 'Tasks waiting in the queue (read from the database: the same on every instance)',
    registers,
    async collect() {
      // A scrape during a database outage keeps the last value rather than failing the whole scrape.
      const waiting = await taskCounts?.waiting().catch(() => null);
      if (waiting !== undefined && waiting !== null) this.set(waiting);
    },
  });
  new Gauge({
    name: 'signalbox_tasks_running',
    help: 'Task runs in progress on this instance',
    registers,
    collect() {
      this.set(taskCounts?.running() ?? 0);
    },
  });
  new Gauge({
    name: 'signalbox_workflow_runs',
    help: 'Workflow runs kept, by status (read from the database: the same on every instance)',
    labelNames: ['status'],
    registers,
    async collect() {
      const counts = await workflowRunCounts?.().catch(() => null);
      if (!counts) return;
      this.reset();
      for (const [status, n] of Object.entries(counts)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'signalbox_websocket_clients',
    help: 'Live socket clients connected to this instance',
    registers,
    collect() {
      this.set(socketCount?.() ?? 0);
    },
  });
  new Gauge({
    name: 'signalbox_audit_forward_queued',
    help: 'Audit events waiting to be delivered to a receiver, by receiver (webhook, syslog)',
    labelNames: ['sink'],
    registers,
    collect() {
      for (const [sink, count] of Object.entries(auditQueued?.() ?? {})) this.set({ sink }, count ?? 0);
    },
  });
  return metrics;
}

/**
 * Records one task run: `start` once its app is known (counts it and its queue wait), `finish` with its final
 * status (counts it and its duration; a run that ended before its app was known counts as started too).
 */
export function trackRun(metrics: Metrics, created: string | null) {
  const claimed = Date.now();
  let app: string | null = null;
  const start = (name: string) => {
    if (app !== null) return;
    app = name;
    metrics.tasksStarted.inc({ app });
    const createdMs = created ? Date.parse(created) : Number.NaN;
    if (Number.isFinite(createdMs))
      metrics.queueWait.observe({ app }, Math.max(0, claimed - createdMs) / 1000);
  };
  return {
    start,
    finish(status: string) {
      start('unknown');
      const labels = { app: app ?? 'unknown' };
      metrics.tasksFinished.inc({ ...labels, status });
      metrics.taskDuration.observe(labels, (Date.now() - claimed) / 1000);
    },
  };
}
