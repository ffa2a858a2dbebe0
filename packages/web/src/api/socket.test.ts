import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

class FakeSocket {
  static all: FakeSocket[] = [];
  onopen: (() => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  onmessage: ((e: { data: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: URL) {
    FakeSocket.all.push(this);
  }
  close(code = 1005, reason = '') {
    this.onclose?.({ code, reason });
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  // The reconnect's random part at its least: the waits are their base (2 s, 4 s, …).
  vi.spyOn(Math, 'random').mockReturnValue(0);
  FakeSocket.all = [];
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('window', { location: { href: 'http://localhost/project/1/history' } });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('LiveSocket', () => {
  it('connects to /api/ws, reconnects 2 s after an unexpected close and reports the reconnect', async () => {
    const { LiveSocket, RECONNECT_DELAY_MS } = await import('./socket');
    expect(RECONNECT_DELAY_MS).toBe(2000);
    const live = new LiveSocket();
    const states: [boolean, boolean][] = [];
    const messages: unknown[] = [];
    live.onState((c, r) => states.push([c, r]));
    live.subscribe((m) => messages.push(m));
    live.start();
    expect(String(FakeSocket.all[0].url)).toBe('ws://localhost/api/ws?logs=batches');
    FakeSocket.all[0].onopen?.();
    FakeSocket.all[0].onmessage?.({
      data: '{"type":"log","task_id":1,"project_id":1,"output":"x","time":""}',
    });
    FakeSocket.all[0].onmessage?.({ data: 'not json' });
    expect(messages).toHaveLength(1);
    FakeSocket.all[0].close();
    vi.advanceTimersByTime(1999);
    expect(FakeSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.all[1].onopen?.();
    expect(states).toEqual([
      [true, false],
      [false, false],
      [true, true],
    ]);
  });

  it('asks views to resync after a reconnect and when the server regains the other instances (Redis back)', async () => {
    const { LiveSocket } = await import('./socket');
    const live = new LiveSocket();
    let resyncs = 0;
    const off = live.onResync(() => {
      resyncs += 1;
    });
    live.start();
    FakeSocket.all[0].onopen?.();
    expect(resyncs).toBe(0);
    // Redis goes down: lines other instances write meanwhile never reach this one.
    FakeSocket.all[0].onmessage?.({ data: '{"type":"relay","connected":false}' });
    expect(resyncs).toBe(0);
    // Redis is back: the views read again from the database what they missed.
    FakeSocket.all[0].onmessage?.({ data: '{"type":"relay","connected":true}' });
    expect(resyncs).toBe(1);
    FakeSocket.all[0].onmessage?.({ data: '{"type":"relay","connected":true}' });
    expect(resyncs).toBe(1);
    // The socket itself drops and comes back.
    FakeSocket.all[0].close();
    vi.advanceTimersByTime(2000);
    FakeSocket.all[1].onopen?.();
    expect(resyncs).toBe(2);
    off();
    FakeSocket.all[1].onmessage?.({ data: '{"type":"relay","connected":false}' });
    FakeSocket.all[1].onmessage?.({ data: '{"type":"relay","connected":true}' });
    expect(resyncs).toBe(2);
  });

  it('tells a close for the server shutting down from a lost connection, until a socket opens again', async () => {
    const { LiveSocket } = await import('./socket');
    const { liveShutdownClose } = await import('@signalbox/contracts');
    const live = new LiveSocket();
    live.start();
    FakeSocket.all[0].onopen?.();
    FakeSocket.all[0].close(1006);
    expect(live.serverShutDown).toBe(false);
    vi.advanceTimersByTime(2000);
    FakeSocket.all[1].onopen?.();
    FakeSocket.all[1].close(liveShutdownClose.code, liveShutdownClose.reason);
    expect(live.serverShutDown).toBe(true);
    // The reconnects fail while the server is away: still the shutdown.
    vi.advanceTimersByTime(2000);
    FakeSocket.all[2].close(1006);
    expect(live.serverShutDown).toBe(true);
    vi.advanceTimersByTime(4000);
    FakeSocket.all[3].onopen?.();
    expect(live.serverShutDown).toBe(false);
  });

  it('waits longer after each failed reconnect, up to 20 s (30 s with the random part), and 2 s again once a socket opened', async () => {
    const { LiveSocket } = await import('./socket');
    const live = new LiveSocket();
    live.start();
    FakeSocket.all[0].onopen?.();
    FakeSocket.all[0].close(1006);
    // The server is away: each attempt fails; the waits double.
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 6; attempt++) {
      const before = Date.now();
      while (FakeSocket.all.length === attempt) vi.advanceTimersByTime(100);
      waits.push(Date.now() - before);
      FakeSocket.all[attempt]!.close(1006);
    }
    expect(waits).toEqual([2000, 4000, 8000, 16000, 20000, 20000]);
    // Back: the next loss waits 2 s again.
    vi.advanceTimersByTime(30_000);
    FakeSocket.all[7]!.onopen?.();
    FakeSocket.all[7]!.close(1006);
    vi.advanceTimersByTime(1999);
    expect(FakeSocket.all).toHaveLength(8);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(9);
  });

  it('spreads the consoles of a restarted server over a second, then over longer and longer waits', async () => {
    const { reconnectDelay } = await import('./socket');
    const draws = [0, 0.25, 0.5, 0.999];
    expect(draws.map((r) => reconnectDelay(0, () => r))).toEqual([2000, 2250, 2500, 2999]);
    expect(draws.map((r) => reconnectDelay(3, () => r))).toEqual([16000, 18000, 20000, 23992]);
    expect(reconnectDelay(50, () => 0)).toBe(20000);
    expect(reconnectDelay(50, () => 0.999)).toBe(29990);
  });

  it('does not reconnect after stop()', async () => {
    const { LiveSocket } = await import('./socket');
    const live = new LiveSocket();
    live.start();
    live.stop();
    vi.advanceTimersByTime(5000);
    expect(FakeSocket.all).toHaveLength(1);
  });
});
