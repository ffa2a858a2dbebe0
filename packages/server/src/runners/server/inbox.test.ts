import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import type { RunnerMessage } from '../../runner-protocol/protocol';
import { maxMergedLines, readRunnerMessages } from './inbox';

/** The part of a socket the reader uses: message events, pause and resume. */
class FakeSocket extends EventEmitter {
  isPaused = false;
  pauses = 0;
  pause() {
    this.isPaused = true;
    this.pauses++;
  }
  resume() {
    this.isPaused = false;
  }
  receive(message: unknown) {
    this.emit('message', Buffer.from(JSON.stringify(message)), false);
  }
}

const output = (task_id: number, seq: number, lines = 1) => ({
  type: 'output',
  task_id,
  seq,
  lines: Array.from({ length: lines }, (_, i) => ({
    time: '2026-11-28T10:00:00.000Z',
    output: `${seq}.${i}`,
  })),
});

/** A reader whose turns wait until the test lets them end. */
function reader() {
  const socket = new FakeSocket();
  const turns: RunnerMessage[][] = [];
  const problems: string[] = [];
  const foreign: { protocol: number; version: string }[] = [];
  let alive = 0;
  let release: (() => void) | null = null;
  let closed = false;
  readRunnerMessages(socket as unknown as WebSocket, {
    alive: () => void alive++,
    closed: () => closed,
    invalid: (problem) => {
      problems.push(problem);
      closed = true;
    },
    incompatible: (runner) => {
      foreign.push(runner);
      closed = true;
    },
    handle: (messages) => {
      turns.push(messages);
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    },
  });
  /** Ends the turn under way and waits until the next one began (or there is none). */
  const next = async () => {
    const count = turns.length;
    const end = release;
    release = null;
    end?.();
    for (let i = 0; i < 20 && turns.length === count; i++) await new Promise((r) => setImmediate(r));
  };
  const seqs = () => turns.map((t) => t.map((m) => (m.type === 'output' ? m.seq : m.type)));
  return { socket, turns, problems, foreign, next, seqs, alive: () => alive };
}

describe("a runner's messages, read in turns", () => {
  it('hands over output batches of one task that wait one after another together, in order', async () => {
    const r = reader();
    r.socket.receive(output(7, 1));
    for (let seq = 2; seq <= 5; seq++) r.socket.receive(output(7, seq));
    r.socket.receive({ type: 'heartbeat', running: [7] });
    r.socket.receive(output(7, 6));
    r.socket.receive(output(8, 1));
    expect(r.seqs()).toEqual([[1]]);
    await r.next();
    await r.next();
    await r.next();
    await r.next();
    expect(r.seqs()).toEqual([[1], [2, 3, 4, 5], ['heartbeat'], [6], [1]]);
    expect(r.alive()).toBeGreaterThanOrEqual(7);
  });

  it('never takes a batch out of order or past the merged line limit together', async () => {
    const r = reader();
    r.socket.receive(output(7, 1));
    r.socket.receive(output(7, 2, 1000));
    r.socket.receive(output(7, 4));
    r.socket.receive(output(7, 5));
    for (let seq = 6; seq < 6 + maxMergedLines / 1000 + 1; seq++) r.socket.receive(output(7, seq, 1000));
    await r.next();
    await r.next();
    await r.next();
    const [, second, third, fourth] = r.turns;
    expect(second?.map((m) => (m.type === 'output' ? m.seq : 0))).toEqual([2]);
    expect(third?.map((m) => (m.type === 'output' ? m.seq : 0))).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(fourth?.map((m) => (m.type === 'output' ? m.seq : 0))).toEqual([13, 14]);
  });

  it('stops reading past a few waiting messages and reads on once they are handled', async () => {
    const r = reader();
    for (let seq = 1; seq <= 9; seq++) r.socket.receive(output(7, seq * 2));
    expect(r.socket.isPaused).toBe(true);
    await r.next();
    expect(r.socket.isPaused).toBe(false);
  });

  it('handles nothing after a message that is not valid, naming what was wrong without its text', async () => {
    const r = reader();
    r.socket.receive(output(7, 1));
    r.socket.receive(output(7, 2));
    r.socket.receive({ type: 'output', task_id: 7, seq: 3, lines: 'sekrit' });
    r.socket.receive(output(7, 4));
    await r.next();
    await r.next();
    expect(r.seqs()).toEqual([[1], [2]]);
    expect(r.problems).toEqual(['lines: custom']);
  });

  it('tells a hello of another protocol version apart from an invalid one, before checking its fields', async () => {
    const hello = { type: 'hello', version: '9.0.0', started_at: 'now', max_parallel_tasks: 1, running: [] };
    const future = reader();
    future.socket.receive({ ...hello, protocol: 2, only_in_protocol_2: true });
    future.socket.receive(output(7, 1));
    await future.next();
    expect(future.foreign).toEqual([{ protocol: 2, version: '9.0.0' }]);
    expect(future.problems).toEqual([]);
    expect(future.turns).toEqual([]);

    const current = reader();
    current.socket.receive({ ...hello, protocol: 1 });
    current.socket.receive(hello);
    await current.next();
    expect(current.seqs()).toEqual([['hello'], ['hello']]);
    expect(current.foreign).toEqual([]);
  });
});
