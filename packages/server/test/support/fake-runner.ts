import WebSocket from 'ws';
import type { RunnerMessage, ServerMessage } from '../../src/runner-protocol/protocol';
import { generateRunnerKeys, openSealed } from '../../src/runner-protocol/seal';
import type { JobPayload } from '../../src/runners/payload';
import type { Harness } from './harness';
import { waitFor } from './task-fixtures';

/** The registration secret the runner tests configure (SIGNALBOX_RUNNER_REGISTRATION_TOKEN). */
export const GLOBAL_REGISTRATION_TOKEN = 'global-registration-secret';

/** A caller address of its own, so that the failed registrations a test makes on purpose throttle no other one. */
export const someAddress = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;

export type RegisteredRunner = { id: number; token: string; keys: { publicKey: string; privateKey: string } };

/** Registers a runner through the API with a fresh key pair. */
export async function registerRunner(
  h: Harness,
  body: { tags?: string[]; max_parallel_tasks?: number; project_id?: number; name?: string } = {},
  registrationToken = GLOBAL_REGISTRATION_TOKEN,
): Promise<RegisteredRunner> {
  const keys = generateRunnerKeys();
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/internal/runners',
    remoteAddress: someAddress(),
    payload: { registration_token: registrationToken, public_key: keys.publicKey, ...body },
  });
  if (res.statusCode !== 200) throw new Error(`registration failed: ${res.statusCode} ${res.body}`);
  return { ...res.json(), keys };
}

/**
 * A runner process as the server sees it, speaking runners/protocol.ts by hand: it collects what the server sends,
 * opens job payloads with its private key, and sends whatever a test tells it to (right or wrong).
 */
export class FakeRunner {
  readonly received: ServerMessage[] = [];
  readonly jobs = new Map<number, JobPayload>();
  readonly closed: Promise<{ code: number; reason: string }>;
  private constructor(
    readonly ws: WebSocket,
    readonly runner: RegisteredRunner,
  ) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as ServerMessage;
      this.received.push(m);
      if (m.type === 'job')
        this.jobs.set(m.task_id, JSON.parse(openSealed(runner.keys.privateKey, m.payload).toString()));
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
  }

  /** Opens the socket (no hello yet). */
  static async open(base: string, runner: RegisteredRunner, token = runner.token): Promise<FakeRunner> {
    const ws = new WebSocket(`${base}/api/internal/runners/ws`, { headers: { 'x-runner-token': token } });
    const fake = new FakeRunner(ws, runner);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => resolve());
      ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.on('error', reject);
    });
    return fake;
  }

  /** Opens the socket and says hello; resolves with the welcome. */
  static async connect(
    base: string,
    runner: RegisteredRunner,
    hello: {
      started_at?: string;
      max_parallel_tasks?: number;
      running?: { task_id: number; last_seq: number }[];
      protocol?: number;
      sandbox?: { mode: 'bwrap' | 'off' | 'refused'; reason?: string };
      draining?: boolean;
    } = {},
  ) {
    const fake = await FakeRunner.open(base, runner);
    const { started_at, max_parallel_tasks, running, ...rest } = hello;
    fake.send({
      type: 'hello',
      version: 'test',
      started_at: started_at ?? new Date().toISOString(),
      max_parallel_tasks: max_parallel_tasks ?? 1,
      running: running ?? [],
      ...rest,
    });
    const welcome = await fake.next('welcome');
    return { fake, welcome };
  }

  send(message: RunnerMessage | Record<string, unknown> | string) {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The first message of the type (after `from`) that matches, waiting for it. */
  async next<T extends ServerMessage['type']>(
    type: T,
    match: (m: Extract<ServerMessage, { type: T }>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<Extract<ServerMessage, { type: T }>> {
    return waitFor(
      async () =>
        this.received.find(
          (m): m is Extract<ServerMessage, { type: T }> =>
            m.type === type && match(m as Extract<ServerMessage, { type: T }>),
        ),
      timeoutMs,
      `a ${type} message`,
    );
  }

  /** Resolves once the server answered a ping: everything it sent before has arrived. */
  roundTrip(): Promise<void> {
    return new Promise((resolve) => {
      this.ws.once('pong', () => resolve());
      this.ws.ping();
    });
  }

  output(taskId: number, seq: number, lines: string[]) {
    this.send({
      type: 'output',
      task_id: taskId,
      seq,
      lines: lines.map((output) => ({ time: new Date().toISOString(), output })),
    });
  }

  close() {
    this.ws.close();
    return this.closed;
  }
}
