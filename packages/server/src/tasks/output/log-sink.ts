import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../db';
import { untilDbAnswers } from '../../db/retry';
import { describeDbError } from '../../db/unavailable';
import { LineIntake } from '../../lib/line-intake';
import type { EventBus } from '../../live/bus';
import type { Metrics } from '../../metrics/metrics';
import type { LineTarget } from '../sandbox/process';
import { countOutput, countOutputSince, type OutputRow, type OutputWriter } from './output.store';

/** Lines held before a flush starts at once instead of on the timer. */
const BATCH_ROWS = 500;
/** Characters held before a flush starts at once (long lines). */
const BATCH_CHARS = 4 * 1024 * 1024;
/**
 * Output that trickles in is flushed at most PROMPT_FLUSHES times at once within this many ms, then at the end of
 * that spell: a line after a quieter spell (a task's first lines, then its command's first one) is stored and
 * published at once — once the work under way settles (setImmediate), so that a run's opening lines are stored while
 * its first command starts rather than before — and a steady trickle costs PROMPT_FLUSHES transactions per spell.
 */
const FLUSH_MS = 100;
const PROMPT_FLUSHES = 2;
/** Above this many unwritten lines or characters the readers pause (bounded memory for chatty tasks). */
const HIGH_WATER = 20_000;
const HIGH_WATER_CHARS = 32 * 1024 * 1024;

/**
 * Collects a task's output lines, masks secrets, stores them in batches (one transaction each) and only then
 * publishes each line as a `log` message — so every line a socket client saw is already in the database. While the
 * database is unavailable a batch is tried again (see dbRetry; the readers pause once too many lines wait), and a
 * batch whose transaction was committed before its connection dropped is not stored twice.
 */
export class LogSink extends LineIntake implements LineTarget {
  private pending: OutputRow[] = [];
  private pendingChars = 0;
  private timer: NodeJS.Timeout | null = null;
  private soon: NodeJS.Immediate | null = null;
  private flushing: Promise<void> | null = null;
  /** When the current spell of flushes began (performance.now()), and how many flushes started in it. */
  private spellStart = Number.NEGATIVE_INFINITY;
  private spellFlushes = 0;
  private drainCallbacks: (() => void)[] = [];
  /** Lines stored so far (tests and benchmarks read it). */
  stored = 0;
  /**
   * How many lines the task's log held before this sink stored any (a task interrupted after a restart gets its
   * last line from a new sink): each published line's number is its position in the log, base + stored so far.
   */
  private base: number | undefined;
  /** Lines given up on after the database stayed unavailable past the retry cap. */
  lost = 0;
  /** The time of the last stored line and how many stored lines carry it (times never go down within a task). */
  private tailTime = '';
  private tailCount = 0;

  constructor(
    private readonly deps: {
      db: Db;
      bus: EventBus;
      log: FastifyBaseLogger;
      /** The engine's output writer. */
      output: Pick<OutputWriter, 'write'>;
      metrics: Pick<Metrics, 'outputLines'>;
    },
    private readonly projectId: number,
    private readonly taskId: number,
    /** giveUp: stop retrying at once (the server is shutting down). */
    private readonly options: { giveUp?: () => boolean } = {},
  ) {
    super();
  }

  protected override keep(time: string, output: string) {
    this.pending.push({ task_id: this.taskId, time, output });
    this.pendingChars += output.length;
    if (this.pending.length >= BATCH_ROWS || this.pendingChars >= BATCH_CHARS) this.kick();
    else if (!this.timer && !this.soon && !this.flushing) {
      const wait = this.spellStart + FLUSH_MS - performance.now();
      if (wait <= 0 || this.spellFlushes < PROMPT_FLUSHES) this.soon = setImmediate(() => this.kick());
      else this.timer = setTimeout(() => this.kick(), wait);
    }
  }

  pressure() {
    return this.pending.length > HIGH_WATER || this.pendingChars > HIGH_WATER_CHARS;
  }

  onDrain(callback: () => void) {
    this.drainCallbacks.push(callback);
  }

  private kick() {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.soon) {
      clearImmediate(this.soon);
      this.soon = null;
    }
    if (!this.flushing) {
      const now = performance.now();
      if (now - this.spellStart >= FLUSH_MS) {
        this.spellStart = now;
        this.spellFlushes = 0;
      }
      this.spellFlushes += 1;
      this.flushing = this.loop().finally(() => {
        this.flushing = null;
      });
    }
  }

  private async loop() {
    while (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      this.pendingChars = 0;
      await this.store(batch);
      const low = this.pending.length <= HIGH_WATER / 2 && this.pendingChars <= HIGH_WATER_CHARS / 2;
      if (low && this.drainCallbacks.length) {
        const callbacks = this.drainCallbacks;
        this.drainCallbacks = [];
        for (const cb of callbacks) cb();
      }
      // Let a few more lines gather so batches stay large under load.
      if (this.pending.length && this.pending.length < BATCH_ROWS && this.pendingChars < BATCH_CHARS)
        await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** Stores one batch and publishes it; on a lost connection it tries again until the database answers. */
  private async store(batch: OutputRow[]) {
    let attempted = false;
    try {
      await untilDbAnswers(
        async () => {
          if (attempted && (await this.landed(batch))) return;
          this.base ??= await countOutput(this.deps.db, this.taskId);
          attempted = true;
          await this.deps.output.write(batch);
        },
        { log: this.deps.log, what: 'storing task output', taskId: this.taskId, giveUp: this.options.giveUp },
      );
    } catch (err) {
      this.lost += batch.length;
      // The error only, never the statement: a driver's error can carry the lines' text.
      const reason = describeDbError(err);
      this.deps.log.error({ reason, taskId: this.taskId, lines: batch.length }, 'storing task output failed');
      return;
    }
    // Batches are stored one after another and a lost batch is never published nor counted, so line numbers follow
    // the stored order without gaps.
    const first = (this.base ?? 0) + this.stored + 1;
    this.stored += batch.length;
    this.deps.metrics.outputLines.inc(batch.length);
    const last = batch.at(-1)?.time ?? this.tailTime;
    const atLast = batch.length - 1 - batch.findLastIndex((row) => row.time !== last);
    this.tailCount = last === this.tailTime && atLast === batch.length ? this.tailCount + atLast : atLast;
    this.tailTime = last;
    this.deps.bus.publishLogs({
      project_id: this.projectId,
      task_id: this.taskId,
      lines: batch.map((row, i) => ({ output: row.output, time: row.time, line: first + i })),
    });
  }

  /**
   * After a failed attempt: whether the batch is in the database anyway (its commit went through, the answer was
   * lost). Rows at or after the batch's first time are the batch plus the earlier lines sharing that time.
   */
  private async landed(batch: OutputRow[]) {
    const first = batch[0]?.time;
    if (first === undefined) return true;
    const earlier = first === this.tailTime ? this.tailCount : 0;
    return (await countOutputSince(this.deps.db, this.taskId, first)) === earlier + batch.length;
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
