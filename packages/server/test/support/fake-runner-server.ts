import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import {
  type RunnerMessage,
  runnerClose,
  runnerMessageSchema,
  runnerProtocol,
  runnerRegistrationSchema,
  type ServerMessage,
} from '../../src/runner-protocol/protocol';
import { sealFor } from '../../src/runner-protocol/seal';
import type { JobPayload } from '../../src/runners/payload';

export type StoredTask = {
  /** Lines stored, in order (each batch stored once: only the seq one above the last stored). */
  lines: string[];
  seq: number;
  /** Every output message received, stored or not. */
  received: number[];
  finished: Extract<RunnerMessage, { type: 'finished' }> | null;
  statuses: Extract<RunnerMessage, { type: 'status' }>[];
  refused: string | null;
};

/**
 * A stand-in for a Signalbox server's runner side, speaking protocol.ts: registration (`reg-token` is the accepted
 * registration token), unregistration, and the runner WebSocket. It stores output as the real server does (a batch
 * only when its seq is one above the last stored), acknowledges it, and answers `finished` with `done` once every
 * batch is stored. Tests send jobs and controls and can drop the socket.
 */
export class FakeRunnerServer {
  readonly registrations: Record<string, unknown>[] = [];
  readonly unregistrations: (string | undefined)[] = [];
  readonly hellos: Extract<RunnerMessage, { type: 'hello' }>[] = [];
  readonly tasks = new Map<number, StoredTask>();
  /** Messages from the runner that protocol.ts refuses. */
  readonly protocolErrors: string[] = [];
  readonly tokens = new Map<string, { id: number; publicKey: string }>();
  /** Acknowledge stored batches (false: store silently, as if the acks were lost). */
  ack = true;
  /** Tasks the welcome tells the runner to abandon (as ended meanwhile) when its hello names them. */
  readonly abandon = new Set<number>();
  readonly heartbeats: Extract<RunnerMessage, { type: 'heartbeat' }>[] = [];
  /** Drop output messages on arrival (as if lost in flight before a connection failure). */
  lose = false;
  /** Answer a hello by closing the socket so (as a server refusing the runner's protocol version does). */
  refuseHello: { code: number; reason: string } | null = null;
  /** The protocol version the welcome names (absent: as an older server's welcome). */
  welcomeProtocol: number | undefined = runnerProtocol;
  /** The welcome says the server keeps task outputs (false: as an older server's welcome). */
  keepsOutputs = true;
  /** `drain` messages received. */
  drains = 0;
  /** Called on every output message received (after storing it). */
  onOutput: ((taskId: number, seq: number) => void) | null = null;
  socket: WebSocket | null = null;
  /** The public key of the runner on `socket`. */
  socketKey = '';
  connections = 0;
  private http: Server;
  private wss: WebSocketServer;
  url = '';

  constructor() {
    this.wss = new WebSocketServer({ noServer: true });
    this.http = createServer((req, res) => void this.route(req, res));
    this.http.on('upgrade', (req, socket, head) => {
      if (req.url !== '/api/internal/runners/ws') return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req));
    });
  }

  async start() {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
    return this;
  }

  async close() {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise((r) => this.http.close(r));
  }

  task(id: number): StoredTask {
    let t = this.tasks.get(id);
    if (!t) {
      t = { lines: [], seq: 0, received: [], finished: null, statuses: [], refused: null };
      this.tasks.set(id, t);
    }
    return t;
  }

  private async route(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const answer = (status: number, body?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (req.url !== '/api/internal/runners') return answer(404, { message: 'Not found' });
    if (req.method === 'POST') {
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
      this.registrations.push(body);
      const parsed = runnerRegistrationSchema.safeParse(body);
      if (!parsed.success) return answer(400, { message: 'Invalid registration' });
      if (!['reg-token', '-dash-reg-token'].includes(parsed.data.registration_token))
        return answer(401, { message: 'Invalid registration token' });
      const id = this.tokens.size + 1;
      const token = `runner-token-${id}-${Math.random().toString(36).slice(2)}`;
      this.tokens.set(token, { id, publicKey: parsed.data.public_key });
      return answer(201, { id, token });
    }
    if (req.method === 'DELETE') {
      const token = req.headers['x-runner-token'] as string | undefined;
      this.unregistrations.push(token);
      if (!token || !this.tokens.delete(token)) return answer(401, { message: 'Runner token not accepted' });
      res.writeHead(204);
      return res.end();
    }
    answer(405, { message: 'Method not allowed' });
  }

  private accept(ws: WebSocket, req: IncomingMessage) {
    const runner = this.tokens.get(String(req.headers['x-runner-token']));
    if (!runner) {
      ws.close(runnerClose.unauthorized.code, runnerClose.unauthorized.reason);
      return;
    }
    this.socket?.terminate();
    this.socket = ws;
    this.socketKey = runner.publicKey;
    this.connections++;
    ws.on('message', (data) => {
      const parsed = runnerMessageSchema.safeParse(JSON.parse(String(data)));
      if (!parsed.success) {
        this.protocolErrors.push(parsed.error.message);
        return;
      }
      this.onMessage(ws, runner.id, parsed.data);
    });
  }

  private send(ws: WebSocket, message: ServerMessage) {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  }

  private onMessage(ws: WebSocket, runnerId: number, m: RunnerMessage) {
    switch (m.type) {
      case 'hello': {
        this.hellos.push(m);
        if (this.refuseHello) {
          ws.close(this.refuseHello.code, this.refuseHello.reason);
          return;
        }
        const acked = m.running
          .filter((r) => this.tasks.has(r.task_id) && !this.abandon.has(r.task_id))
          .map((r) => ({ task_id: r.task_id, seq: this.task(r.task_id).seq }));
        const abandon = m.running.map((r) => r.task_id).filter((id) => this.abandon.has(id));
        this.send(ws, {
          type: 'welcome',
          ...(this.welcomeProtocol === undefined ? {} : { protocol: this.welcomeProtocol }),
          runner_id: runnerId,
          heartbeat_ms: 1000,
          acked,
          abandon,
          ...(this.keepsOutputs ? { task_outputs: true } : {}),
        });
        return;
      }
      case 'output': {
        const t = this.task(m.task_id);
        t.received.push(m.seq);
        if (this.lose) {
          this.onOutput?.(m.task_id, m.seq);
          return;
        }
        if (m.seq === t.seq + 1) {
          t.seq = m.seq;
          t.lines.push(...m.lines.map((l) => l.output));
        }
        if (this.ack && m.seq <= t.seq) this.send(ws, { type: 'ack', task_id: m.task_id, seq: t.seq });
        this.onOutput?.(m.task_id, m.seq);
        this.maybeDone(ws, t, m.task_id);
        return;
      }
      case 'status':
        this.task(m.task_id).statuses.push(m);
        return;
      case 'finished': {
        const t = this.task(m.task_id);
        t.finished = m;
        this.maybeDone(ws, t, m.task_id);
        return;
      }
      case 'refuse':
        this.task(m.task_id).refused = m.reason;
        return;
      case 'heartbeat':
        this.heartbeats.push(m);
        return;
      case 'drain':
        this.drains++;
        return;
    }
  }

  private maybeDone(ws: WebSocket, t: StoredTask, taskId: number) {
    if (t.finished && t.seq >= t.finished.last_seq) this.send(ws, { type: 'done', task_id: taskId });
  }

  /** Seals `payload` to the public key of the connected runner (or to `publicKey`) and sends it. */
  sendJob(taskId: number, payload: JobPayload, publicKey?: string) {
    const key = publicKey ?? this.socketKey;
    if (!key || !this.socket) throw new Error('no runner connected');
    this.task(taskId);
    this.send(this.socket, { type: 'job', task_id: taskId, payload: sealFor(key, JSON.stringify(payload)) });
  }

  control(taskId: number, action: 'stop' | 'force' | 'confirm' | 'reject') {
    if (this.socket) this.send(this.socket, { type: 'control', task_id: taskId, action });
  }

  /** Drops the runner's connection abruptly (as a network failure would). */
  drop() {
    this.socket?.terminate();
    this.socket = null;
  }
}
