/*
 * The remote-runner protocol: what a `signalbox runner` process and a server say to each other.
 *
 * Registration is plain HTTP (`POST /api/internal/runners`, `DELETE /api/internal/runners`); the work then flows
 * over one WebSocket the runner opens to `GET /api/internal/runners/ws` with its token in the `X-Runner-Token`
 * header. Runners always connect out to the server: nothing connects to a runner.
 *
 * Every WebSocket message is one JSON object with a `type`. Output travels in numbered batches: the runner numbers
 * each task's batches 1, 2, 3…, keeps every batch until the server acknowledges it, and after a reconnect resends,
 * in order, each batch above the `acked` seq the server's `welcome` names. The server stores a batch only if its seq
 * is exactly one above the last stored (`task.runner_seq`), so a line is never lost or stored twice.
 */
import { driftReportSchema, PLAN_FILE_MAX_BYTES, planSummarySchema } from '@signalbox/contracts';
import { z } from 'zod';

/** The header carrying a runner's own token on every runner request. */
export const runnerTokenHeader = 'x-runner-token';

/**
 * The version of this protocol. A runner says it in its hello (a hello without one is version 1) and the server in
 * its welcome; the server refuses a runner of another version (close code 4426, the reason naming both), and such
 * a runner stops instead of reconnecting. Raise it with any change an older runner or server would misread.
 */
export const runnerProtocol = 1;

/** The largest protocol version a hello may name (a bigger number is not a version: the hello is invalid). */
const maxProtocol = 1_000_000;

/** How often a runner sends a heartbeat, unless the server's welcome says otherwise. */
export const defaultHeartbeatMs = 5_000;

/**
 * Largest WebSocket message a server takes from a runner (a bigger one closes the socket with 1009): a runner keeps
 * each output batch's JSON below it, whatever its line count.
 */
export const maxMessageBytes = 8 * 1024 * 1024;

/** The longest JSON text of a task's outputs a `finished` message may carry (a runner sends none longer). */
export const maxOutputsChars = 256 * 1024;

/**
 * The longest JSON text (in bytes) of a plan summary a `status` or `finished` message may carry: a runner sends
 * none longer (the task then has no summary on the server, and its log says so).
 */
export const maxPlanBytes = 6 * 1024 * 1024;

/** A plan summary as a runner sends it; sent only to a server whose welcome says `task_plans`. */
const planField = planSummarySchema
  .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= maxPlanBytes)
  .optional();

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** What a run says about its saved plan beside the summary; sent only to a server whose welcome says `plan_files`. */
const planFactsField = z
  .strictObject({
    digest: sha256,
    workspace: z.string().min(1).max(255),
    state_lineage: z.string().max(64).nullable(),
    state_serial: z.number().int().min(0).nullable(),
  })
  .optional();

/** What a drift check found; sent only to a server whose welcome says `task_drift`. */
const driftField = driftReportSchema
  .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= maxPlanBytes)
  .optional();

/** Most lines one output batch may carry. */
export const maxBatchLines = 1_000;

const id = z.number().int().positive();
const time = z.string().min(1).max(40);

/** `POST /api/internal/runners`: a runner registers with a registration token (global, one-time or project). */
export const runnerRegistrationSchema = z.strictObject({
  registration_token: z.string().min(1).max(512),
  name: z.string().trim().min(1).max(255).optional(),
  tags: z.array(z.string().trim().min(1).max(64)).max(32).optional(),
  max_parallel_tasks: z.number().int().min(1).max(1000).optional(),
  /** PEM (SPKI) of the runner's X25519 public key; job payloads are encrypted to it. */
  public_key: z.string().min(1).max(4096),
  webhook: z.string().max(1024).optional(),
  /** A project runner's project: must match a project registration token's project; with the global token, names it. */
  project_id: z.number().int().positive().optional(),
});
export type RunnerRegistration = z.infer<typeof runnerRegistrationSchema>;

/** The answer to a registration: the runner's id and its own token (shown only here; the server keeps a hash). */
export type RunnerRegistered = { id: number; token: string };

/** An encrypted job payload: X25519 key agreement with an ephemeral key, HKDF-SHA256, AES-256-GCM. */
export const sealedSchema = z.strictObject({
  alg: z.literal('x25519-hkdf-sha256-aes-256-gcm'),
  /** The ephemeral public key, PEM (SPKI). */
  epk: z.string().max(4096),
  /** base64 */
  iv: z.string().max(64),
  tag: z.string().max(64),
  data: z.string(),
});
export type Sealed = z.infer<typeof sealedSchema>;

/* Runner → server. */

/** First message after connecting: what the runner is and which tasks it is still running. */
export const helloSchema = z.strictObject({
  type: z.literal('hello'),
  /** The protocol version (runnerProtocol) the runner speaks; absent: 1. */
  protocol: z.number().int().min(1).max(maxProtocol).optional(),
  /** The signalbox version of the runner. */
  version: z.string().max(64),
  /** When this runner process started (ISO 8601): a newer start than a task's assignment means the runner restarted. */
  started_at: time,
  max_parallel_tasks: z.number().int().min(1).max(1000),
  /** Tasks this process is running (after a reconnect), with the last output batch it has made for each. */
  running: z.array(z.strictObject({ task_id: id, last_seq: z.number().int().min(0) })).max(1000),
  /** The sandbox its tasks run in (tasks/confinement.ts), with why when it is not bwrap. */
  sandbox: z
    .strictObject({ mode: z.enum(['bwrap', 'off', 'refused']), reason: z.string().max(1000).optional() })
    .optional(),
  /** The runner is shutting down (see `drain`): it takes no new job. */
  draining: z.boolean().optional(),
});

/**
 * What the protocol version of a hello is, read before the hello is checked against this version's schema (a
 * runner of another version may send fields this one does not know); null when it is not a hello.
 */
export function helloProtocol(value: unknown): { protocol: number; version: string } | null {
  if (typeof value !== 'object' || value === null || (value as { type?: unknown }).type !== 'hello')
    return null;
  const { protocol, version } = value as { protocol?: unknown; version?: unknown };
  // Not a version at all (a string, a fraction, out of range): left to the schema, which refuses it.
  if (protocol !== undefined && !(Number.isSafeInteger(protocol) && (protocol as number) >= 1)) return null;
  if (protocol !== undefined && (protocol as number) > maxProtocol) return null;
  return {
    protocol: protocol === undefined ? 1 : (protocol as number),
    version: typeof version === 'string' ? version.slice(0, 64) : '',
  };
}

/** The runner is shutting down: it finishes its running tasks but takes no new job; the server gives it none. */
export const drainSchema = z.strictObject({ type: z.literal('drain') });

export const heartbeatSchema = z.strictObject({
  type: z.literal('heartbeat'),
  running: z.array(id).max(1000),
});

/** Longest output line a batch carries (a runner splits longer ones). */
const maxOutputLine = 1_000_000;

/** One output line: exactly `time` (1–40 characters) and `output` (at most maxOutputLine characters). */
function isOutputLine(value: unknown): value is { time: string; output: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  let keys = 0;
  for (const key in value) {
    if (key !== 'time' && key !== 'output') return false;
    keys++;
  }
  const { time, output } = value as { time: unknown; output: unknown };
  return (
    keys === 2 &&
    typeof time === 'string' &&
    time.length >= 1 &&
    time.length <= 40 &&
    typeof output === 'string' &&
    output.length <= maxOutputLine
  );
}

export const outputSchema = z.strictObject({
  type: z.literal('output'),
  task_id: id,
  seq: z.number().int().positive(),
  // Checked by hand: a schema per line cost the server more than parsing the batch's JSON.
  lines: z.custom<{ time: string; output: string }[]>(
    (value) =>
      Array.isArray(value) && value.length >= 1 && value.length <= maxBatchLines && value.every(isOutputLine),
    { message: `1 to ${maxBatchLines} lines of {time, output}` },
  ),
});

/** A status change during the run (the final one is `finished`). */
export const statusSchema = z.strictObject({
  type: z.literal('status'),
  task_id: id,
  status: z.enum(['running', 'waiting_confirmation', 'confirmed', 'rejected']),
  commit_hash: z.string().max(64).nullish(),
  commit_message: z.string().max(10_000).nullish(),
  /** The summary of the task's saved plan, kept before the status (sent with waiting_confirmation). */
  plan: planField,
  plan_facts: planFactsField,
});

/**
 * The saved plan file of a plan-only task (its bytes as base64, at most PLAN_FILE_MAX_BYTES), sent just before
 * the message that carries its plan; the server keeps it sealed so that a later task may apply it. Sent only to a
 * server whose welcome says `plan_files`.
 */
export const planFileMessageSchema = z.strictObject({
  type: z.literal('plan_file'),
  task_id: id,
  digest: sha256,
  data: z.string().max(Math.ceil(PLAN_FILE_MAX_BYTES / 3) * 4),
});

/** The run ended; `last_seq` is its last output batch, so the server knows when it has all of them. */
export const finishedSchema = z.strictObject({
  type: z.literal('finished'),
  task_id: id,
  status: z.enum(['success', 'error', 'stopped']),
  last_seq: z.number().int().min(0),
  /** Why it ended, for an error the runner itself decided (e.g. "The runner restarted while it ran this task"). */
  message: z.string().max(1000).optional(),
  /**
   * The named values the task published (SIGNALBOX_OUTPUTS); sent only to a server whose welcome says
   * `task_outputs` (an older server would refuse the field).
   */
  outputs: z
    .record(z.string().max(100), z.unknown())
    .refine((v) => JSON.stringify(v).length <= maxOutputsChars)
    .optional(),
  /** The summary of the task's saved plan when no status carried it (a plan-only run). */
  plan: planField,
  plan_facts: planFactsField,
  /** What the task's drift check found. */
  drift: driftField,
});

/** The runner cannot take a job it was given (cannot decrypt it, no free slot): the server queues the task again. */
export const refuseSchema = z.strictObject({
  type: z.literal('refuse'),
  task_id: id,
  reason: z.string().max(1000),
});

export const runnerMessageSchema = z.discriminatedUnion('type', [
  helloSchema,
  heartbeatSchema,
  outputSchema,
  statusSchema,
  finishedSchema,
  refuseSchema,
  drainSchema,
  planFileMessageSchema,
]);
export type RunnerMessage = z.infer<typeof runnerMessageSchema>;

/* Server → runner. */

export type ServerMessage =
  | {
      type: 'welcome';
      /** The server's protocol version (runnerProtocol); absent from a server older than the versioned protocol. */
      protocol?: number;
      runner_id: number;
      heartbeat_ms: number;
      /** For each task of the hello's `running` the server still expects: the last batch it stored. */
      acked: { task_id: number; seq: number }[];
      /** Tasks of the hello's `running` the server has already ended (e.g. as runner lost): kill them, send nothing. */
      abandon: number[];
      /** The server keeps the outputs a `finished` message carries (absent: an older server, send none). */
      task_outputs?: boolean;
      /** The server keeps the plan summary a `status` or `finished` message carries (absent: send none). */
      task_plans?: boolean;
      /** The server keeps plan files (`plan_file`) and plan facts (absent: send none). */
      plan_files?: boolean;
      /** The server keeps drift reports of `finished` (absent: send none). */
      task_drift?: boolean;
    }
  /** Run this task; the payload opens to a `JobPayload` (see payload.ts). */
  | { type: 'job'; task_id: number; payload: Sealed }
  /** Stop (SIGTERM to the group, SIGKILL after a grace), force stop (SIGKILL now), or answer a plan confirmation. */
  | { type: 'control'; task_id: number; action: 'stop' | 'force' | 'confirm' | 'reject' }
  /** Every batch up to `seq` is stored. */
  | { type: 'ack'; task_id: number; seq: number }
  /** The final status is stored: the runner may forget the task. */
  | { type: 'done'; task_id: number };

/** Close codes the server uses on a runner socket. */
export const runnerClose = {
  /** Bad, unknown or deleted token: the runner must stop reconnecting and say so. */
  unauthorized: { code: 4401, reason: 'Runner token not accepted' },
  /** Disabled by an admin: the runner keeps reconnecting slowly but gets no work. */
  disabled: { code: 4403, reason: 'Runner disabled' },
  /** A newer connection with the same token replaced this one. */
  replaced: { code: 4409, reason: 'Replaced by a newer connection' },
  protocol: { code: 4400, reason: 'Protocol error' },
  /** The runner speaks another protocol version: it must stop and be upgraded (or the server must). */
  incompatible: { code: 4426, reason: 'Incompatible protocol version' },
} as const;

/** The close reason for a runner of another protocol version, naming both (at most 123 bytes, as a close reason). */
export function incompatibleReason(runner: { protocol: number; version: string }, server: string) {
  const text = `Runner protocol ${runner.protocol} (signalbox ${runner.version || 'unknown'}) is not supported: this server speaks protocol ${runnerProtocol} (signalbox ${server})`;
  return Buffer.from(text)
    .subarray(0, 123)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
