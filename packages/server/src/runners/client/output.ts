import { LineIntake } from '../../lib/line-intake';
import { maxBatchLines } from '../../runner-protocol/protocol';
import type { TaskLog } from '../../tasks/run/run-core';

/** A batch is sent this long after its first line at the latest. */
export const FLUSH_MS = 50;
/** A batch is sent at once when its lines reach this many bytes. */
export const BATCH_BYTES = 256 * 1024;
/**
 * Unacknowledged output one task may hold (sent or not): above it the task's output pipes pause (its processes
 * block on writing) until acknowledgements bring it under half. This bounds the runner's memory per task while the
 * server is unreachable.
 */
export const MAX_UNACKED_BYTES = 16 * 1024 * 1024;
/** The longest line the protocol takes; longer ones are split. */
const MAX_OUTPUT = 1_000_000;

export type OutputLine = { time: string; output: string };
/**
 * A batch as sent: its lines already as the JSON array of the protocol's `lines` (made once, when the batch is cut:
 * no object per line is kept while the server has not acknowledged it).
 */
export type Batch = { seq: number; count: number; json: string; bytes: number };

/**
 * A task's output on a runner: masks secrets, gathers lines into batches numbered 1, 2, 3…, hands each batch to
 * `send` (which may drop it while disconnected) and keeps it until the server acknowledges its seq, so that after a
 * reconnect every batch the server has not stored can be sent again, in order.
 */
export class TaskOutput extends LineIntake implements TaskLog {
  /** Each pending line as its JSON object. */
  private pending: string[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private unacked: Batch[] = [];
  private unackedBytes = 0;
  private drainCallbacks: (() => void)[] = [];
  private prefixTime = '';
  /** `{"time":"<the last time>","output":` */
  private timePrefix = '';
  /** The seq of the last batch made. */
  lastSeq = 0;
  /** Every batch up to this seq is stored by the server. */
  acked = 0;

  constructor(private readonly send: (batch: Batch) => void) {
    super();
  }

  protected override keep(time: string, output: string) {
    if (time !== this.prefixTime) {
      this.prefixTime = time;
      this.timePrefix = `{"time":"${time}","output":`;
    }
    for (let i = 0; i === 0 || i < output.length; i += MAX_OUTPUT) {
      const json = `${this.timePrefix}${JSON.stringify(output.slice(i, i + MAX_OUTPUT))}}`;
      this.pending.push(json);
      // Characters of JSON: a batch of them stays far below the protocol's message size whatever the encoding.
      this.pendingBytes += json.length;
      if (this.pending.length >= maxBatchLines || this.pendingBytes >= BATCH_BYTES) this.flush();
    }
    if (this.pending.length && !this.timer) this.timer = setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Makes a batch of the pending lines now and sends it. */
  flush() {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.pending.length) return;
    const batch: Batch = {
      seq: ++this.lastSeq,
      count: this.pending.length,
      json: `[${this.pending.join(',')}]`,
      bytes: this.pendingBytes,
    };
    this.pending = [];
    this.pendingBytes = 0;
    this.unacked.push(batch);
    this.unackedBytes += batch.bytes;
    this.send(batch);
  }

  pressure() {
    return this.unackedBytes + this.pendingBytes > MAX_UNACKED_BYTES;
  }

  onDrain(callback: () => void) {
    this.drainCallbacks.push(callback);
  }

  /** The server stored every batch up to `seq`: they are dropped, and paused readers resume once there is room. */
  ack(seq: number) {
    if (seq <= this.acked) return;
    this.acked = Math.min(seq, this.lastSeq);
    while (this.unacked.length && (this.unacked[0]?.seq ?? 0) <= this.acked) {
      const batch = this.unacked.shift() as Batch;
      this.unackedBytes -= batch.bytes;
    }
    if (this.unackedBytes <= MAX_UNACKED_BYTES / 2 && this.drainCallbacks.length) {
      const callbacks = this.drainCallbacks;
      this.drainCallbacks = [];
      for (const cb of callbacks) cb();
    }
  }

  /** The batches not yet acknowledged, in order (to send again after a reconnect). */
  unacknowledged(): readonly Batch[] {
    return this.unacked;
  }

  /** Makes the last batch; delivery goes on until acknowledged. */
  async close() {
    this.flush();
  }

  /** Frees everything (the task is forgotten); paused readers resume so that their processes can end. */
  discard() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = [];
    this.pendingBytes = 0;
    this.unacked = [];
    this.unackedBytes = 0;
    const callbacks = this.drainCallbacks;
    this.drainCallbacks = [];
    for (const cb of callbacks) cb();
  }
}
