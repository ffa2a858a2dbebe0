import type { RawData, WebSocket } from 'ws';
import { ZodError } from 'zod';
import {
  helloProtocol,
  maxBatchLines,
  type RunnerMessage,
  runnerMessageSchema,
  runnerProtocol,
} from '../../runner-protocol/protocol';

/** Messages of one runner held unhandled before its socket stops reading (each at most maxMessageBytes). */
const maxBacklog = 8;
/** Most lines of consecutive output batches handed over together (stored in one transaction). */
export const maxMergedLines = 8 * maxBatchLines;

type OutputMessage = Extract<RunnerMessage, { type: 'output' }>;
/** A hello of another protocol version: what it says it is. */
type Foreign = { protocol: number; version: string };
type Parsed = { message: RunnerMessage } | { problem: string } | { foreign: Foreign };
type Entry = { data: RawData; isBinary: boolean; parsed?: Parsed };

function parse(entry: Entry): Parsed {
  if (entry.parsed) return entry.parsed;
  try {
    if (entry.isBinary) throw new Error('binary message');
    const json: unknown = JSON.parse(String(entry.data));
    // A hello of another protocol version is told so, not checked against this version's schema.
    const hello = helloProtocol(json);
    if (hello && hello.protocol !== runnerProtocol) entry.parsed = { foreign: hello };
    else entry.parsed = { message: runnerMessageSchema.parse(json) };
  } catch (err) {
    // Only what was wrong, never the message's text (output lines may hold secrets).
    const problem =
      err instanceof ZodError
        ? err.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.code}`).join('; ')
        : entry.isBinary
          ? 'binary message'
          : 'not JSON';
    entry.parsed = { problem };
  }
  return entry.parsed;
}

/**
 * Reads a runner's socket: its messages are validated and handled one turn at a time, in the order they arrived.
 * Past a few unhandled messages the socket stops reading (bounded memory). Output batches of one task that wait
 * one after another (seq by seq) are handed over together, so that a server that falls behind stores bigger
 * transactions rather than more of them.
 */
export function readRunnerMessages(
  socket: WebSocket,
  handlers: {
    /** A message arrived (before its turn) or was handled: the runner is alive. */
    alive(): void;
    /** One message, or consecutive output batches of one task; the next turn waits for it. */
    handle(messages: RunnerMessage[]): Promise<void>;
    /** A message that is not valid, with what was wrong: nothing after it is handled. */
    invalid(problem: string): void;
    /** A hello of another protocol version: nothing after it is handled. */
    incompatible(runner: Foreign): void;
    /** True once the connection is done with: what is left is dropped. */
    closed(): boolean;
  },
) {
  const inbox: Entry[] = [];
  let handling = false;

  /** The first waiting message, with the output batches that continue it. */
  function takeTurn(): { problem: string } | { foreign: Foreign } | { messages: RunnerMessage[] } {
    const parsed = parse(inbox.shift() as Entry);
    if (!('message' in parsed)) return parsed;
    const messages = [parsed.message];
    if (parsed.message.type !== 'output') return { messages };
    let last: OutputMessage = parsed.message;
    let lines = last.lines.length;
    for (;;) {
      const next = inbox[0] ? parse(inbox[0]) : null;
      if (!next || !('message' in next)) break;
      const m = next.message;
      if (m.type !== 'output' || m.task_id !== last.task_id || m.seq !== last.seq + 1) break;
      if (lines + m.lines.length > maxMergedLines) break;
      inbox.shift();
      messages.push(m);
      lines += m.lines.length;
      last = m;
    }
    return { messages };
  }

  async function handleAll() {
    handling = true;
    try {
      while (inbox.length && !handlers.closed()) {
        const turn = takeTurn();
        if (inbox.length < maxBacklog && socket.isPaused) socket.resume();
        if ('problem' in turn) {
          inbox.length = 0;
          handlers.invalid(turn.problem);
          break;
        }
        if ('foreign' in turn) {
          inbox.length = 0;
          handlers.incompatible(turn.foreign);
          break;
        }
        await handlers.handle(turn.messages);
        handlers.alive();
      }
    } finally {
      handling = false;
      if (handlers.closed()) inbox.length = 0;
    }
  }

  socket.on('message', (data, isBinary) => {
    handlers.alive();
    if (handlers.closed()) return;
    inbox.push({ data, isBinary });
    if (inbox.length >= maxBacklog) socket.pause();
    if (!handling) void handleAll();
  });
}
