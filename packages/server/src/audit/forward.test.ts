import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventView } from '@signalbox/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness } from '../../test/support/harness';
import { freePort } from '../../test/support/net';
import { rejectInserts } from '../../test/support/reject-inserts';
import { serverBin } from '../../test/support/server-process';
import { ansibleBody, templateFixtures } from '../../test/support/template-fixtures';
import { ConfigError, loadConfig } from '../config';
import { parseSyslogAddress, syslogLine } from './syslog';

/** An HTTP receiver of audit batches on 127.0.0.1: answers 204, or holds every request while `hang` is set. */
async function httpReceiver(port?: number) {
  const batches: { body: string; headers: IncomingHttpHeaders }[] = [];
  const held: ServerResponse[] = [];
  const state = { hang: false, requests: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      state.requests += 1;
      if (state.hang) {
        held.push(res);
        // Counted once answered: a batch the forwarder gave up on is sent again.
        res.on('finish', () => batches.push({ body, headers: req.headers }));
        return;
      }
      batches.push({ body, headers: req.headers });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return {
    url: `http://127.0.0.1:${address.port}/audit`,
    state,
    batches,
    /** Every forwarded event, in the order received. */
    events: () =>
      batches.flatMap((b) =>
        b.body
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as EventView),
      ),
    /** Stops holding: answers the held requests and every later one. */
    release() {
      state.hang = false;
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(204).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The RFC 5424 parts of a syslog line this server sends. */
const SYSLOG_LINE = /^<110>1 (\S+) (\S+) signalbox (\d+) audit - (\{.*\})$/;
const syslogEvent = (line: string) => {
  const m = SYSLOG_LINE.exec(line);
  if (!m) throw new Error(`not an RFC 5424 audit line: ${line}`);
  const event = JSON.parse(m[4]!) as EventView;
  expect(m[1]).toBe(event.created);
  return event;
};

/** Lines a TCP syslog receiver on 127.0.0.1:`port` got (newline framing). */
async function tcpReceiver(port: number) {
  const lines: string[] = [];
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let rest = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    lines,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Runs `work` and answers how long it took, in ms. */
async function timed(work: () => Promise<unknown>) {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

const fast = { retryMs: 50, maxRetryMs: 200, closeTimeoutMs: 500 };

describe.each(testDialects())('audit forwarding on $name', (dialect) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** An app forwarding to the given receivers, its admin, and a project to write events into. */
  async function forwardingApp(config: Parameters<typeof createHarness>[1], options = {}) {
    const h = await createHarness(dialect, config, { auditForward: { ...fast, ...options } });
    cleanups.push(() => h.close());
    const admin = await h.userClient({ admin: true });
    const project = await admin.post('/api/projects', { name: 'Forwarded project' });
    expect(project.statusCode).toBe(201);
    return { h, admin, projectId: project.json().id as number };
  }

  /** Every event the database holds, oldest first (as an admin lists them). */
  const storedEvents = async (admin: Client) =>
    ((await admin.get('/api/events?limit=1000')).json() as EventView[]).reverse();

  const newViews = async (admin: Client, projectId: number, count: number, prefix = 'View') => {
    const times: number[] = [];
    for (let i = 0; i < count; i++)
      times.push(
        await timed(async () => {
          const res = await admin.post(`/api/project/${projectId}/views`, { title: `${prefix} ${i}` });
          expect(res.statusCode).toBe(201);
        }),
      );
    return times;
  };

  it('forwards every event written, once, as signed JSON lines and RFC 5424 syslog lines', async () => {
    const receiver = await httpReceiver();
    cleanups.push(() => receiver.close());
    const udp = createSocket('udp4');
    const datagrams: string[] = [];
    udp.on('message', (msg) => datagrams.push(msg.toString('utf8')));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => udp.close(() => resolve())));
    const secret = 'audit-signing-secret-4711';
    const { h, admin, projectId } = await forwardingApp({
      auditWebhookUrl: receiver.url,
      auditWebhookSecret: secret,
      auditSyslog: `udp://127.0.0.1:${udp.address().port}`,
    });
    // Events of every kind of writer: a project's resources, a membership (written in a transaction), users.
    await newViews(admin, projectId, 3);
    const member = await h.userClient();
    expect(
      (await admin.post(`/api/project/${projectId}/users`, { user_id: member.userId, role: 'guest' }))
        .statusCode,
    ).toBe(204);
    const user = await admin.post('/api/users', {
      name: 'Forwarded User',
      username: 'forwarded',
      email: 'forwarded@example.test',
      password: 'forwarded-user-password',
    });
    expect(user.statusCode).toBe(201);

    const stored = await storedEvents(admin);
    expect(stored.map((e) => e.description)).toEqual([
      'Project Forwarded project created',
      'View View 0 created',
      'View View 1 created',
      'View View 2 created',
      `User ${member.username} added to the team as guest`,
      'User forwarded created',
    ]);
    // Each exactly once, in order, with the names the API lists.
    await expect.poll(() => receiver.events().length).toBe(stored.length);
    expect(receiver.events()).toEqual(stored);
    for (const { body, headers } of receiver.batches) {
      expect(headers['content-type']).toBe('application/x-ndjson');
      expect(headers['x-signalbox-signature']).toBe(
        `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      );
      expect(body.endsWith('\n')).toBe(true);
    }
    await expect.poll(() => datagrams.length).toBe(stored.length);
    expect(datagrams.map(syslogEvent)).toEqual(stored);

    // Nothing secret goes out or into the log.
    const sent = [...receiver.batches.map((b) => b.body), ...datagrams].join('\n');
    for (const text of [secret, 'forwarded-user-password', admin.password]) {
      expect(sent).not.toContain(text);
      expect(h.logLines.join('\n')).not.toContain(text);
    }
    // Counted once the forwarder has seen the delivery through (a moment after the receiver has it).
    const metrics = async () => (await h.anonymous().get('/api/metrics')).body;
    for (const sink of ['webhook', 'syslog'])
      await expect
        .poll(metrics)
        .toContain(`signalbox_audit_events_forwarded_total{sink="${sink}"} ${stored.length}`);
  });

  it('forwards no event of a change that rolled back', async () => {
    const receiver = await httpReceiver();
    cleanups.push(() => receiver.close());
    const { h, admin, projectId } = await forwardingApp({ auditWebhookUrl: receiver.url });
    const fx = await templateFixtures(h, projectId);
    // The template and its event are written, then the database refuses its schedule: all three roll back.
    const allow = await rejectInserts(h, 'schedule');
    try {
      const res = await admin.post(
        `/api/project/${projectId}/templates`,
        ansibleBody(fx, { name: 'Rolled back', schedule: { cron_format: '@daily' } }),
      );
      expect(res.statusCode, res.body).toBe(500);
    } finally {
      await allow();
    }
    await newViews(admin, projectId, 1, 'After');
    const stored = await storedEvents(admin);
    expect(stored.map((e) => e.description)).toEqual([
      'Project Forwarded project created',
      'View After 0 created',
    ]);
    // Forwarded in order: once the later view's event is there, the rolled-back one would have been sent before it.
    await expect.poll(() => receiver.events().length).toBe(stored.length);
    expect(receiver.events()).toEqual(stored);
  });

  it('keeps requests fast while the receiver is down, and delivers once it is back', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/audit?token=query-secret`;
    const { h, admin, projectId } = await forwardingApp({ auditWebhookUrl: url }, { timeoutMs: 30_000 });
    const times = await newViews(admin, projectId, 10);
    // A request that waited for the receiver would take its 30 s timeout.
    expect(Math.max(...times)).toBeLessThan(5000);
    await expect
      .poll(() => h.logLines.some((l) => l.includes('audit forwarding failed; retrying')))
      .toBe(true);
    const failure = JSON.parse(h.logLines.find((l) => l.includes('audit forwarding failed'))!);
    expect(failure).toMatchObject({ sink: 'webhook', reason: 'ECONNREFUSED' });
    expect(h.logLines.join('\n')).not.toContain('query-secret');

    const receiver = await httpReceiver(port);
    cleanups.push(() => receiver.close());
    const stored = await storedEvents(admin);
    await expect.poll(() => receiver.events().length).toBe(stored.length);
    expect(receiver.events()).toEqual(stored);
    await expect.poll(() => h.logLines.some((l) => l.includes('audit forwarding delivers again'))).toBe(true);
  });

  it('keeps requests fast while the receiver holds its answer, and delivers when it answers', async () => {
    const receiver = await httpReceiver();
    cleanups.push(() => receiver.close());
    receiver.state.hang = true;
    const { admin, projectId } = await forwardingApp(
      { auditWebhookUrl: receiver.url },
      { timeoutMs: 30_000 },
    );
    const times = await newViews(admin, projectId, 6);
    expect(Math.max(...times)).toBeLessThan(5000);
    // One request in flight at a time: the forwarder waits for it instead of piling up more.
    await expect.poll(() => receiver.state.requests).toBe(1);
    expect(receiver.events()).toEqual([]);
    receiver.release();
    const stored = await storedEvents(admin);
    await expect.poll(() => receiver.events().length).toBe(stored.length);
    expect(receiver.events()).toEqual(stored);
  });

  it('sends a batch again when the receiver answers too late (at least once)', async () => {
    const receiver = await httpReceiver();
    cleanups.push(() => receiver.close());
    receiver.state.hang = true;
    // Every failure is logged (not only the first of a spell): on a loaded machine the first attempt may fail
    // otherwise than by the time limit, and the retries that time out must still say so.
    const { h, admin, projectId } = await forwardingApp(
      { auditWebhookUrl: receiver.url },
      { timeoutMs: 200, logEveryMs: 0 },
    );
    await newViews(admin, projectId, 3);
    await expect
      .poll(() => h.logLines.some((l) => l.includes('"reason":"timed out"') && l.includes('retrying')))
      .toBe(true);
    receiver.release();
    const stored = await storedEvents(admin);
    await expect.poll(() => new Set(receiver.events().map((e) => e.id)).size).toBe(stored.length);
    // Repeats carry the same ids, so the receiver can tell them.
    const firstSeen = [...new Map(receiver.events().map((e) => [e.id, e])).values()];
    expect(firstSeen.sort((a, b) => a.id - b.id)).toEqual(stored);
  });

  it('bounds the queue of a dead receiver, counting what it drops', async () => {
    const port = await freePort();
    const { h, admin, projectId } = await forwardingApp(
      { auditWebhookUrl: `http://127.0.0.1:${port}/audit` },
      { maxQueue: 5 },
    );
    await newViews(admin, projectId, 11);
    const stored = await storedEvents(admin);
    expect(stored).toHaveLength(12);
    const metric = async (name: string) =>
      new RegExp(`^${name}\\{sink="webhook"\\} (\\d+)$`, 'm').exec(
        (await h.anonymous().get('/api/metrics')).body,
      )?.[1];
    await expect.poll(() => metric('signalbox_audit_events_dropped_total')).toBe('7');
    expect(await metric('signalbox_audit_forward_queued')).toBe('5');
    const dropLine = JSON.parse(h.logLines.find((l) => l.includes('audit forwarding queue is full'))!);
    expect(dropLine).toMatchObject({ level: 40, sink: 'webhook', dropped: expect.any(Number), queued: 5 });

    // The oldest five were kept and go out once the receiver is back.
    const receiver = await httpReceiver(port);
    cleanups.push(() => receiver.close());
    await expect.poll(() => receiver.events().length).toBe(5);
    expect(receiver.events()).toEqual(stored.slice(0, 5));
    await expect.poll(() => metric('signalbox_audit_forward_queued')).toBe('0');
  });

  it('sends syslog over TCP, connecting again when the receiver comes back', async () => {
    const port = await freePort();
    const { h, admin, projectId } = await forwardingApp({ auditSyslog: `tcp://127.0.0.1:${port}` });
    await newViews(admin, projectId, 4);
    await expect.poll(() => h.logLines.some((l) => l.includes('"sink":"syslog"'))).toBe(true);
    let receiver = await tcpReceiver(port);
    const stored = await storedEvents(admin);
    await expect.poll(() => receiver.lines.length).toBe(stored.length);
    expect(receiver.lines.map(syslogEvent)).toEqual(stored);
    // The receiver restarts: later events reach the new one.
    await receiver.close();
    await newViews(admin, projectId, 1, 'After restart');
    receiver = await tcpReceiver(port);
    cleanups.push(receiver.close);
    await expect
      .poll(() => receiver.lines.map((l) => syslogEvent(l).description))
      .toContain('View After restart 0 created');
  });
});

describe('audit forwarding of the signalbox command', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signalbox-audit-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('forwards the events a command writes before it exits', { timeout: 120_000 }, async () => {
    const receiver = await httpReceiver();
    try {
      const bin = serverBin;
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!/^(SIGNALBOX|SEMAPHORE)_/.test(k)) env[k] = v;
      const args = [
        'user',
        'add',
        '--login',
        'cli-user',
        '--email',
        'cli@example.test',
        '--password',
        'cli-pw-1',
      ];
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(process.execPath, [bin, ...args], {
          env: {
            ...env,
            SIGNALBOX_DATA_DIR: dir,
            SIGNALBOX_DB_URL: `sqlite://${join(dir, 'cli.db')}`,
            SIGNALBOX_BCRYPT_COST: '4',
            SIGNALBOX_AUDIT_WEBHOOK_URL: receiver.url,
          },
          stdio: 'ignore',
        });
        child.on('error', reject);
        child.on('close', resolve);
      });
      expect(code).toBe(0);
      // Delivered before the command ended.
      expect(receiver.events()).toEqual([
        expect.objectContaining({ object_type: 'user', description: 'User cli-user created', user_id: null }),
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe('audit forwarding settings', () => {
  it('refuses receivers it cannot use, naming the variable', () => {
    const bad: [string, string, RegExp][] = [
      ['SIGNALBOX_AUDIT_WEBHOOK_URL', 'ftp://example.test/x', /http:\/\/ or https:\/\/ URL/],
      ['SIGNALBOX_AUDIT_WEBHOOK_URL', 'not a url', /http:\/\/ or https:\/\/ URL/],
      ['SIGNALBOX_AUDIT_SYSLOG', 'http://127.0.0.1:514', /udp:\/\/host:port or tcp:\/\/host:port/],
      ['SIGNALBOX_AUDIT_SYSLOG', 'udp://127.0.0.1:70000', /port 1-65535/],
      ['SIGNALBOX_AUDIT_SYSLOG', 'tcp://[zz::1]:514', /udp:\/\/host:port|IPv6/],
      ['SIGNALBOX_AUDIT_SYSLOG', 'tcp://user@host:514', /udp:\/\/host:port/],
    ];
    for (const [name, value, message] of bad) {
      expect(() => loadConfig({ [name]: value }), value).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value }), value).toThrow(new RegExp(`^${name}: .*${message.source}`));
    }
    expect(loadConfig({ SIGNALBOX_AUDIT_SYSLOG: 'udp://[::1]' }).auditSyslog).toBe('udp://[::1]');
    expect(parseSyslogAddress('udp://[::1]')).toEqual({ protocol: 'udp', host: '::1', port: 514 });
    expect(parseSyslogAddress('tcp://logs.example.test:6514')).toEqual({
      protocol: 'tcp',
      host: 'logs.example.test',
      port: 6514,
    });
  });

  it('writes RFC 5424 lines with the event as the message', () => {
    expect(syslogLine('2025-03-01T08:00:00.000Z', '{"id":1}', 'host-1', 42)).toBe(
      '<110>1 2025-03-01T08:00:00.000Z host-1 signalbox 42 audit - {"id":1}',
    );
  });
});
