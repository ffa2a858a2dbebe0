import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { DriftReport, PlanSummary } from '@signalbox/contracts';
import WebSocket from 'ws';
import type { AppRegistry } from '../../lib/apps';
import {
  defaultHeartbeatMs,
  maxOutputsChars,
  maxPlanBytes,
  type RunnerMessage,
  runnerClose,
  runnerProtocol,
  runnerTokenHeader,
  type ServerMessage,
  sealedSchema,
} from '../../runner-protocol/protocol';
import { openSealed } from '../../runner-protocol/seal';
import { killOrphans } from '../../tasks/queue/orphans';
import { claimCacheFolder } from '../../tasks/run/cache-owner';
import { type FinalStatus, RunControl, runCore } from '../../tasks/run/run-core';
import type { Confinement } from '../../tasks/sandbox/confinement';
import { systemProcesses } from '../../tasks/sandbox/process';
import type { IsolationSetting } from '../../tasks/sandbox/sandbox';
import { version } from '../../version';
import type { JobPayload } from '../payload';
import type { RunnerSettings } from './files';
import { type Batch, TaskOutput } from './output';

/** Reconnect delays: from the first, doubling up to the last. */
const RECONNECT_FIRST_MS = 200;
const RECONNECT_MAX_MS = 5_000;
/** While an admin has the runner disabled it asks again this rarely. */
const DISABLED_RETRY_MS = 30_000;
/** How long a shutting-down runner waits for the server to take the output and final status of its tasks. */
const SHUTDOWN_FLUSH_MS = 10_000;

const statusesSent = new Set(['running', 'waiting_confirmation', 'confirmed', 'rejected']);

type Held = {
  id: number;
  control: RunControl;
  output: TaskOutput;
  /** Status messages not yet sent (made while disconnected), in order. */
  statusQueue: RunnerMessage[];
  commit: { hash: string | null; message: string | null } | null;
  finished: { status: FinalStatus; message?: string } | null;
  /** The outputs the task published (SIGNALBOX_OUTPUTS), sent with `finished` to a server that keeps them. */
  outputs: Record<string, unknown> | null;
  /** The summary of the task's saved plan not yet sent: it goes with waiting_confirmation, else with `finished`. */
  plan: PlanSummary | null;
  /** The plan's facts (digest, workspace, prior state), sent with its summary. */
  planFacts: PlanFactsMessage | null;
  /** The plan file of a plan-only run, sent (`plan_file`) just before the message carrying its summary. */
  planFile: { digest: string; data: string } | null;
  /** What the task's drift check found, sent with `finished`. */
  drift: DriftReport | null;
  /** The server ended it (abandon): it is killed and nothing more of it is sent. */
  abandoned: boolean;
  done: Promise<void>;
};

type PlanFactsMessage = NonNullable<Extract<RunnerMessage, { type: 'status' }>['plan_facts']>;

export type RunnerOptions = {
  dir: string;
  settings: RunnerSettings;
  privateKey: string;
  apps: AppRegistry;
  isolation: IsolationSetting;
  /** What its tasks' processes can see (resolved once at start, like the server's). */
  confinement: Confinement;
  /** Bytes of output a task may print (SIGNALBOX_TASK_OUTPUT_LIMIT_MB; 0: no limit). */
  outputLimit: number;
  webRoot: string;
  /** The runner's own log (never a secret or a task's output). */
  log: (line: string) => void;
  /** How long a SIGTERM lets running tasks finish before they are stopped (ms; 0: stopped at once). */
  drainMs?: number;
};

/** Why a runner exits that must not be restarted as it is: its token or its protocol version was refused. */
export const refusedExitCode = 1;

/** The id marking this runner folder's task processes (orphan cleanup): stable across restarts, unique per folder. */
export function runnerOwner(dir: string) {
  return `runner-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`;
}

/**
 * Whose repositories the runner's caches hold: its registration (the server's address, the runner's id there and
 * its token). Registered again, with another server or the same one, its caches start afresh: repository ids are
 * one server database's own, and a clone borrows every object of its cache.
 */
export function runnerCacheOwner(settings: Pick<RunnerSettings, 'url' | 'id' | 'token'>) {
  const digest = createHash('sha256')
    .update(`${settings.url}\n${settings.id}\n${settings.token}`)
    .digest('hex');
  return `runner ${digest}`;
}

/** Ends with the exit code the process should have. */
export class RunnerProcess {
  private readonly startedAt = new Date().toISOString();
  private readonly tasks = new Map<number, Held>();
  private socket: WebSocket | null = null;
  /** The current server's welcome said it keeps task outputs (an older server would refuse them). */
  private serverKeepsOutputs = false;
  /** The current server's welcome said it keeps plan summaries (an older server would refuse them). */
  private serverKeepsPlans = false;
  /** The current server's welcome said it keeps plan files and facts. */
  private serverKeepsPlanFiles = false;
  /** The current server's welcome said it keeps drift reports. */
  private serverKeepsDrift = false;
  /** Set once the server's welcome arrived on the current socket: only then are messages sent. */
  private ready = false;
  private heartbeatMs = defaultHeartbeatMs;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private backoff = RECONNECT_FIRST_MS;
  private lastHeard = Date.now();
  private lastFailure = '';
  private stopping = false;
  private drainTimer: NodeJS.Timeout | null = null;
  private stopTasks: (() => void) | null = null;
  private exit: ((code: number) => void) | null = null;
  private readonly workDir: string;
  private readonly owner: string;

  constructor(private readonly opts: RunnerOptions) {
    this.workDir = join(opts.dir, 'work');
    this.owner = runnerOwner(opts.dir);
  }

  /** Runs until the server refuses the token (1) or a shutdown finishes (0). */
  run(): Promise<number> {
    this.cleanLeftovers();
    return new Promise<number>((resolve) => {
      this.exit = (code) => {
        this.exit = null;
        this.closeSocket();
        resolve(code);
      };
      this.connect();
    });
  }

  /**
   * Kills and removes what a previous runner process in this folder left (a crash): processes and task folders; and
   * the repository caches of an earlier registration.
   */
  private cleanLeftovers() {
    const killed = killOrphans(this.owner, 'all', this.workDir);
    if (killed) this.opts.log(`Killed ${killed} leftover task process(es) of a previous runner process`);
    const tasksDir = join(this.workDir, 'tasks');
    if (existsSync(tasksDir)) rmSync(tasksDir, { recursive: true, force: true });
    mkdirSync(tasksDir, { recursive: true, mode: 0o700 });
    if (claimCacheFolder(this.reposCache, runnerCacheOwner(this.opts.settings)) === 'cleared')
      this.opts.log('Removed the repository caches of an earlier registration');
  }

  private get reposCache() {
    return join(this.workDir, 'repos');
  }

  /**
   * Shuts down: takes no new work, and with `drain` (SIGTERM) tells the server so and lets the running tasks finish
   * for up to `drainMs`; then (at once without `drain`, after the drain, or at the next signal) stops them, gives the
   * server their output and final status, and exits. A signal while they are being stopped kills them.
   */
  async shutdown(drain = false) {
    if (this.stopping) {
      if (this.stopTasks) {
        // A second signal during the drain: stop the tasks now.
        this.stopTasks();
        return;
      }
      // A signal while stopping: kill everything at once.
      for (const t of this.tasks.values()) t.control.stop(true);
      return;
    }
    this.stopping = true;
    const running = () => [...this.tasks.values()].filter((t) => !t.finished);
    const drainMs = this.opts.drainMs ?? 0;
    if (drain && drainMs > 0 && running().length) {
      this.send({ type: 'drain' });
      this.opts.log(
        `Draining: no new tasks; waiting up to ${Math.round(drainMs / 1000)} s for ${running().length} running task(s) to finish (SIGTERM or SIGINT again stops them now)`,
      );
      await new Promise<void>((resolve) => {
        const stopNow = (why: string) => {
          if (!this.stopTasks) return;
          this.stopTasks = null;
          if (this.drainTimer) clearTimeout(this.drainTimer);
          this.drainTimer = null;
          if (why) this.opts.log(why);
          resolve();
        };
        this.stopTasks = () => stopNow('Stopping the running tasks now');
        this.drainTimer = setTimeout(
          () => stopNow(`The drain timeout is over: stopping ${running().length} task(s)`),
          drainMs,
        );
        void Promise.all(this.tasksDone()).then(() => stopNow(''));
      });
    }
    if (running().length) this.opts.log(`Shutting down: stopping ${running().length} task(s)`);
    else this.opts.log('Shutting down');
    for (const t of this.tasks.values()) t.control.stop(false);
    await Promise.all(this.tasksDone());
    const until = Date.now() + SHUTDOWN_FLUSH_MS;
    while (this.tasks.size && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (this.tasks.size)
      this.opts.log(`The server did not confirm ${this.tasks.size} task(s) before the exit`);
    this.exit?.(0);
  }

  /** The runs of the tasks held now (a task started during a drain is not awaited: none is taken then). */
  private tasksDone() {
    return [...this.tasks.values()].map((t) => t.done);
  }

  private wsUrl() {
    return `${this.opts.settings.url.replace(/^http/, 'ws')}/api/internal/runners/ws`;
  }

  private connect() {
    if (!this.exit) return;
    this.ready = false;
    const ws = new WebSocket(this.wsUrl(), {
      headers: { [runnerTokenHeader]: this.opts.settings.token },
      handshakeTimeout: 15_000,
    });
    this.socket = ws;
    let refusedCode: number | null = null;
    /** The server's welcome arrived on this socket. */
    let welcomed = false;
    ws.on('open', () => {
      this.lastHeard = Date.now();
      const confinement = this.opts.confinement;
      this.send({
        type: 'hello',
        protocol: runnerProtocol,
        version,
        started_at: this.startedAt,
        max_parallel_tasks: this.opts.settings.max_parallel,
        running: [...this.tasks.values()]
          .filter((t) => !t.abandoned)
          .map((t) => ({ task_id: t.id, last_seq: t.output.lastSeq })),
        sandbox: {
          mode: confinement.mode,
          ...(confinement.mode !== 'bwrap' && confinement.reason
            ? { reason: confinement.reason.slice(0, 1000) }
            : {}),
        },
        ...(this.stopping ? { draining: true } : {}),
      });
    });
    ws.on('unexpected-response', (_req, res) => {
      refusedCode = res.statusCode ?? 0;
      ws.terminate();
    });
    ws.on('message', (data) => {
      this.lastHeard = Date.now();
      let message: ServerMessage;
      try {
        message = JSON.parse(String(data)) as ServerMessage;
      } catch {
        return;
      }
      if (message?.type === 'welcome') welcomed = true;
      this.onMessage(message);
    });
    ws.on('pong', () => {
      this.lastHeard = Date.now();
    });
    ws.on('error', (err) => {
      // Said once per kind of failure, not on every retry.
      const said = `Connection to ${this.opts.settings.url} failed: ${err.message}`;
      if (refusedCode === null && said !== this.lastFailure) this.opts.log(said);
      this.lastFailure = said;
    });
    ws.on('close', (code, reason) => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.ready = false;
      this.stopHeartbeat();
      if (!this.exit) return;
      if (code === runnerClose.unauthorized.code || refusedCode === 401) {
        this.opts.log(
          `The server does not accept this runner's token (runner ${this.opts.settings.id} was deleted or unregistered): register it again`,
        );
        for (const t of this.tasks.values()) t.control.stop(true);
        this.exit(refusedExitCode);
        return;
      }
      if (code === runnerClose.incompatible.code || (code === runnerClose.protocol.code && !welcomed)) {
        // Reconnecting would be refused again, forever: the runner (or the server) must be upgraded first.
        const why =
          code === runnerClose.incompatible.code && reason.length
            ? String(reason)
            : `the server refused the hello of runner protocol ${runnerProtocol} (signalbox ${version})${reason.length ? ` with "${reason}"` : ''}: it probably runs another signalbox version`;
        this.opts.log(
          `INCOMPATIBLE SERVER: ${why}. Install the signalbox version of the server on this runner, then start it again`,
        );
        for (const t of this.tasks.values()) t.control.stop(true);
        this.exit(refusedExitCode);
        return;
      }
      let delay = this.backoff;
      if (code === runnerClose.disabled.code) {
        this.opts.log('The runner is disabled on the server: asking again later');
        delay = DISABLED_RETRY_MS;
      } else if (refusedCode !== null) {
        this.opts.log(`The server refused the connection: HTTP ${refusedCode}`);
      } else if (code !== 1005 && code !== 1006) {
        this.opts.log(`Disconnected (${code}${reason.length ? ` ${reason}` : ''})`);
      }
      this.backoff = Math.min(this.backoff * 2, RECONNECT_MAX_MS);
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        this.connect();
      }, delay);
    });
  }

  private closeSocket() {
    this.stopHeartbeat();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.socket;
    this.socket = null;
    this.ready = false;
    if (ws) {
      ws.removeAllListeners('close');
      ws.on('error', () => {});
      ws.close(1000);
    }
  }

  private stopHeartbeat() {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private send(message: RunnerMessage): boolean {
    return this.sendText(JSON.stringify(message), message.type === 'hello');
  }

  /** Sends a message's JSON text; only a hello goes before the server's welcome. */
  private sendText(text: string, hello = false): boolean {
    const ws = this.socket;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    if (!hello && !this.ready) return false;
    ws.send(text);
    return true;
  }

  private onMessage(message: ServerMessage) {
    switch (message.type) {
      case 'welcome':
        return this.onWelcome(message);
      case 'job':
        return this.onJob(message.task_id, message.payload);
      case 'control': {
        const t = this.tasks.get(message.task_id);
        if (!t) return;
        if (message.action === 'stop') t.control.stop(false);
        else if (message.action === 'force') t.control.stop(true);
        else if (message.action === 'confirm') t.control.decide('confirmed');
        else if (message.action === 'reject') t.control.decide('rejected');
        return;
      }
      case 'ack':
        this.tasks.get(message.task_id)?.output.ack(message.seq);
        return;
      case 'done': {
        const t = this.tasks.get(message.task_id);
        if (t?.finished) this.forget(t);
        return;
      }
    }
  }

  private onWelcome(welcome: Extract<ServerMessage, { type: 'welcome' }>) {
    // A server older than the versioned protocol says none: it speaks protocol 1.
    const serverProtocol = welcome.protocol ?? 1;
    if (serverProtocol !== runnerProtocol) {
      this.opts.log(
        `INCOMPATIBLE SERVER: it speaks runner protocol ${serverProtocol}, this runner (signalbox ${version}) protocol ${runnerProtocol}. Install the signalbox version of the server on this runner, then start it again`,
      );
      for (const t of this.tasks.values()) t.control.stop(true);
      this.exit?.(refusedExitCode);
      return;
    }
    this.ready = true;
    this.serverKeepsOutputs = welcome.task_outputs === true;
    this.serverKeepsPlans = welcome.task_plans === true;
    this.serverKeepsPlanFiles = welcome.plan_files === true;
    this.serverKeepsDrift = welcome.task_drift === true;
    this.backoff = RECONNECT_FIRST_MS;
    this.lastFailure = '';
    this.heartbeatMs = welcome.heartbeat_ms > 0 ? welcome.heartbeat_ms : defaultHeartbeatMs;
    this.opts.log(`Connected to ${this.opts.settings.url} as runner ${welcome.runner_id}`);
    const acked = new Map((welcome.acked ?? []).map((a) => [a.task_id, a.seq]));
    for (const t of [...this.tasks.values()]) {
      if (t.abandoned) continue;
      const seq = acked.get(t.id);
      if (seq === undefined) {
        // The server has ended it (or no longer expects it): killed, nothing more of it is sent.
        this.abandon(t);
        continue;
      }
      t.output.ack(seq);
      for (const m of t.statusQueue.splice(0)) this.send(m);
      for (const b of t.output.unacknowledged()) this.sendBatch(t.id, b);
      if (t.finished) this.sendFinished(t);
    }
    this.stopHeartbeat();
    this.heartbeatTimer = setInterval(() => {
      const ws = this.socket;
      if (!ws) return;
      // No answer for three beats (not even to pings): the connection is dead, though TCP has not noticed.
      if (Date.now() - this.lastHeard > 3 * this.heartbeatMs + 1000) {
        this.opts.log('The server stopped answering: reconnecting');
        ws.terminate();
        return;
      }
      ws.ping();
      this.send({ type: 'heartbeat', running: [...this.tasks.keys()] });
    }, this.heartbeatMs);
  }

  private abandon(t: Held) {
    t.abandoned = true;
    t.control.stop(true);
    t.output.discard();
    if (t.finished) this.tasks.delete(t.id);
  }

  private forget(t: Held) {
    t.output.discard();
    this.tasks.delete(t.id);
  }

  private sendBatch(taskId: number, batch: Batch) {
    // An output message, with the batch's lines already JSON.
    this.sendText(`{"type":"output","task_id":${taskId},"seq":${batch.seq},"lines":${batch.json}}`);
  }

  /** The plan's facts for a message carrying its summary, its file sent first (once) when there is one. */
  private planFactsFor(t: Held, queue: boolean): { plan_facts?: PlanFactsMessage } {
    if (!t.planFacts || !this.serverKeepsPlanFiles) return {};
    if (t.planFile) {
      const message: RunnerMessage = { type: 'plan_file', task_id: t.id, ...t.planFile };
      if (this.send(message)) t.planFile = null;
      else if (queue) {
        t.statusQueue.push(message);
        t.planFile = null;
      }
    }
    return { plan_facts: t.planFacts };
  }

  private sendFinished(t: Held) {
    if (!t.finished) return;
    const facts = t.plan && this.serverKeepsPlans ? this.planFactsFor(t, false) : {};
    this.send({
      type: 'finished',
      task_id: t.id,
      status: t.finished.status,
      last_seq: t.output.lastSeq,
      ...(t.finished.message ? { message: t.finished.message.slice(0, 1000) } : {}),
      ...(t.outputs && this.serverKeepsOutputs ? { outputs: t.outputs } : {}),
      ...(t.plan && this.serverKeepsPlans ? { plan: t.plan, ...facts } : {}),
      ...(t.drift && this.serverKeepsDrift ? { drift: t.drift } : {}),
    });
  }

  private sendStatus(t: Held, status: string) {
    const message: RunnerMessage = {
      type: 'status',
      task_id: t.id,
      status: status as 'running',
      ...(t.commit ? { commit_hash: t.commit.hash, commit_message: t.commit.message?.slice(0, 10_000) } : {}),
      ...(status === 'waiting_confirmation' && t.plan && this.serverKeepsPlans
        ? { plan: t.plan, ...this.planFactsFor(t, true) }
        : {}),
    };
    if ('plan' in message) t.plan = null;
    if (!this.send(message)) t.statusQueue.push(message);
  }

  private refuse(taskId: number, reason: string) {
    this.opts.log(`Refused task ${taskId}: ${reason}`);
    this.send({ type: 'refuse', task_id: taskId, reason });
  }

  private onJob(taskId: number, sealed: unknown) {
    if (!Number.isInteger(taskId) || taskId < 1) return;
    if (this.tasks.has(taskId)) return;
    if (this.stopping) return this.refuse(taskId, 'The runner is shutting down');
    const running = [...this.tasks.values()].filter((t) => !t.finished).length;
    if (running >= this.opts.settings.max_parallel) return this.refuse(taskId, 'The runner has no free slot');
    let payload: JobPayload;
    try {
      const parsed = sealedSchema.parse(sealed);
      payload = JSON.parse(openSealed(this.opts.privateKey, parsed).toString('utf8')) as JobPayload;
      if (!payload?.details?.task || payload.details.task.id !== taskId) throw new Error('not this task');
    } catch {
      return this.refuse(
        taskId,
        'Cannot decrypt the job (sealed to another key?) or it is not a job of this task',
      );
    }
    this.start(taskId, payload);
  }

  private start(taskId: number, payload: JobPayload) {
    const control = new RunControl();
    const held: Held = {
      id: taskId,
      control,
      output: new TaskOutput((batch) => {
        if (!held.abandoned) this.sendBatch(taskId, batch);
      }),
      statusQueue: [],
      commit: null,
      finished: null,
      outputs: null,
      plan: null,
      planFacts: null,
      planFile: null,
      drift: null,
      abandoned: false,
      done: Promise.resolve(),
    };
    this.tasks.set(taskId, held);
    const details = payload.details;
    const projectId = details.project.id;
    this.opts.log(`Task ${taskId} started`);
    held.done = runCore(
      {
        taskId,
        log: {
          error: (obj: { err?: unknown }) =>
            this.opts.log(
              `Task ${taskId} failed with an internal error: ${(obj.err as Error)?.message ?? obj.err}`,
            ),
        },
        internalErrorLine: 'The task failed with an internal error (see the runner log)',
        processes: systemProcesses,
        apps: this.opts.apps,
        webRoot: this.opts.webRoot,
        // The runner's tasks reach the server where the runner does.
        stateUrl: this.opts.settings.url,
        isolation: this.opts.isolation,
        confinement: this.opts.confinement,
        outputLimit: this.opts.outputLimit,
        owner: this.owner,
        dirs: {
          task: join(this.workDir, 'tasks', String(taskId)),
          home: join(this.workDir, 'home', `project_${projectId}`),
          reposCache: this.reposCache,
        },
        sink: held.output,
        loadDetails: async () => details,
        findKey: async (_projectId, keyId) => payload.keys?.[String(keyId)] ?? null,
        findInventoryRepository: async (_projectId, repositoryId) =>
          payload.inventory_repository?.id === repositoryId ? payload.inventory_repository : null,
        saveCommit: async (hash, message) => {
          held.commit = { hash, message };
        },
        saveOutputs: async (outputs) => {
          // Kept only when the server may take them (outputs read within 64 KiB stay far below this).
          if (JSON.stringify(outputs).length <= maxOutputsChars) held.outputs = outputs;
        },
        savePlan: async (summary, facts) => {
          // A summary larger than a message may carry stays on the runner (the log says the plan).
          if (Buffer.byteLength(JSON.stringify(summary)) <= maxPlanBytes) {
            const { file, ...rest } = facts;
            held.plan = summary;
            held.planFacts = rest;
            held.planFile = file ? { digest: facts.digest, data: file } : null;
          } else held.output.line('The plan summary is too large to send to the server: it is not kept');
        },
        saveDrift: async (report) => {
          if (Buffer.byteLength(JSON.stringify(report)) <= maxPlanBytes) held.drift = report;
          else held.output.line('The drift report is too large to send to the server: it is not kept');
        },
        saveStatus: async (status, extra) => {
          if (held.abandoned) return true;
          if (status === 'success' || status === 'error' || status === 'stopped') {
            held.finished = { status, ...(extra ? { message: extra.message } : {}) };
          } else if (statusesSent.has(status)) {
            this.sendStatus(held, status);
          }
          return true;
        },
      },
      control,
    ).then(
      (final) => {
        this.opts.log(`Task ${taskId} ended: ${final}`);
        held.finished ??= { status: final };
        if (held.abandoned) this.tasks.delete(taskId);
        else this.sendFinished(held);
      },
      (err: unknown) => {
        this.opts.log(`Task ${taskId} failed with an internal error: ${(err as Error)?.message}`);
        held.finished ??= { status: 'error' };
        if (held.abandoned) this.tasks.delete(taskId);
        else this.sendFinished(held);
      },
    );
  }
}
