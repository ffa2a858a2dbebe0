import type { TaskLogBatchMessage } from '@signalbox/contracts';
import WebSocket from 'ws';
import { hubOf } from '../../src/features/live/live.routes';
import type { LiveMessage } from '../../src/live/bus';
import type { Harness } from './harness';
import { waitFor } from './task-fixtures';

export type LiveSocketClient = {
  messages: (LiveMessage | TaskLogBatchMessage)[];
  closed: Promise<{ code: number; reason: string }>;
  ws: WebSocket;
};

/**
 * A WebSocket on an app's /api/ws (`base` is its ws:// address) that collects every message; resolves once the
 * hub has registered it (memberships loaded), so what is published next reaches it.
 */
export async function openLiveSocket(
  h: Harness,
  base: string,
  headers: Record<string, string>,
  /** The socket's query (`?logs=batches`), if any. */
  query = '',
): Promise<LiveSocketClient> {
  const hub = hubOf(h.app)!;
  const before = hub.registered;
  const ws = new WebSocket(`${base}/api/ws${query}`, { headers });
  const messages: LiveSocketClient['messages'] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => resolve());
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on('error', reject);
  });
  // Counted by registrations, not open clients: another test's socket may be closing meanwhile.
  await waitFor(async () => hub.registered > before || undefined, 3000, 'the socket to register');
  return { messages, closed, ws };
}

/**
 * Resolves once the server answered a ping sent now. The server sends in order, so every message it sent before
 * that moment has arrived: what has not arrived by then was never sent (no need to wait "long enough").
 */
export function roundTrip(socket: LiveSocketClient): Promise<void> {
  return new Promise((resolve) => {
    socket.ws.once('pong', () => resolve());
    socket.ws.ping();
  });
}
