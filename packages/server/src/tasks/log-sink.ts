import type { FastifyBaseLogger } from 'fastify';
import type { Db, Dialect } from '../db';
import type { EventBus } from '../live/bus';
import type { LineTarget } from './process';
import { insertOutput, type OutputRow } from './store';

export const MASK = '**********';
/** Lines held before a flush starts at once instead of on the timer. */
const BATCH_ROWS = 500;
const FLUSH_MS = 100;
/** Above this many unwritten lines the readers pause (bounded memory for chatty tasks). */
const HIGH_WATER = 20_000;

/**
 * Collects a task's output lines, masks secrets, stores them in batches (one transaction each) and only then
 * publishes each line as a `log` message — so every line a socket client saw is already in the database.
 */
export class LogSink implements LineTarget {
  private pending: OutputRow[] = [];
  private secrets: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private drainCallbacks: (() => void)[] = [];
  private watchers: ((line: string) => void)[] = [];
  private lastMs = 0;
  private lastTime = '';
  /** Lines stored so far (tests and benchmarks read it). */
  stored = 0;

  constructor(
    private readonly deps: {
      db: Db;
      dialect: Dialect;
      bus: EventBus;
      log: FastifyBaseLogger;
      config: { dbUrl: string };
    },
    private readonly projectId: number,
    private readonly taskId: number,
  ) {}

  /** Registers values to mask in every later line (multi-line secrets are masked line by line too). */
  addSecrets(values: Iterable<string | null | undefined>) {
    const set = new Set(this.secrets);
    for (const v of values) {
      if (!v) continue;
      const text = String(v);
      if (text.trim().length >= 3) set.add(text);
      if (text.includes('\n')) {
        for (const part of text.split(/\r?\n/)) if (part.trim().length >= 8) set.add(part.trim());
      }
    }
    this.secrets = [...set].sort((a, b) => b.length - a.length);
  }

  mask(text: string): string {
    for (const s of this.secrets) if (text.includes(s)) text = text.split(s).join(MASK);
    return text;
  }

  /** Lets an executor look at lines as they arrive (Terraform's "No changes."). */
  watch(listener: (line: string) => void): () => void {
    this.watchers.push(listener);
    return () => {
      this.watchers = this.watchers.filter((w) => w !== listener);
    };
  }

  line(text: string) {
    for (const w of this.watchers) w(text);
    let output = this.secrets.length ? this.mask(text) : text;
    // PostgreSQL text cannot hold NUL.
    if (output.includes('\u0000')) output = output.replaceAll('\u0000', '');
    const ms = Date.now();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastTime = new Date(ms).toISOString();
    }
    this.pending.push({ task_id: this.taskId, time: this.lastTime, output });
    if (this.pending.length >= BATCH_ROWS) this.kick();
    else if (!this.timer && !this.flushing) this.timer = setTimeout(() => this.kick(), FLUSH_MS);
  }

  pressure() {
    return this.pending.length > HIGH_WATER;
  }

  onDrain(callback: () => void) {
    this.drainCallbacks.push(callback);
  }

  private kick() {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.flushing)
      this.flushing = this.loop().finally(() => {
        this.flushing = null;
      });
  }

  private async loop() {
    while (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      try {
        await insertOutput(this.deps.db, this.deps.dialect, batch, this.deps.config.dbUrl);
        this.stored += batch.length;
        this.deps.bus.publishLogs({ project_id: this.projectId, task_id: this.taskId, lines: batch });
      } catch (err) {
        this.deps.log.error({ err, taskId: this.taskId }, 'storing task output failed');
      }
      if (this.pending.length <= HIGH_WATER / 2 && this.drainCallbacks.length) {
        const callbacks = this.drainCallbacks;
        this.drainCallbacks = [];
        for (const cb of callbacks) cb();
      }
      // Let a few more lines gather so batches stay large under load.
      if (this.pending.length && this.pending.length < BATCH_ROWS) await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Stores everything still pending. */
  async close() {
    this.kick();
    while (this.flushing) {
      await this.flushing;
      if (this.pending.length) this.kick();
    }
  }
}
