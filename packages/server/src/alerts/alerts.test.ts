import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { rows } from '../../test/support/scheduler-rows';
import type { Config } from '../config';
import { saveTaskPlan } from '../tasks/terraform-plans.store';
import { alertsIdle } from './alerts';

type Received = {
  method: string;
  path: string;
  body: Record<string, unknown>;
  raw: string;
  headers: IncomingMessage['headers'];
};
type Mail = { to: string[]; subject: string; text: string };

const TG_TOKEN = 'tg-token-s3cret';
const GOTIFY_TOKEN = 'gotify-token-s3cret';
const SLACK_SECRET = 'slack-hook-s3cret';

/** A chat receiver on 127.0.0.1: records every request; /fail/* answers 500, /hang/* never answers, /accepted/* 202. */
async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({
        method: req.method ?? '',
        path,
        body: raw ? JSON.parse(raw) : {},
        raw,
        headers: req.headers,
      });
      if (path.startsWith('/hang/')) return;
      res.statusCode = path.startsWith('/fail/') ? 500 : path.startsWith('/accepted/') ? 202 : 200;
      res.end(path.startsWith('/fail/') ? 'boom' : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const decodeQp = (s: string) =>
  s
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

async function startSmtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (c) => {
        raw += c;
      });
      stream.on('end', () => {
        const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: /^Subject: (.*)$/m.exec(head)?.[1] ?? '',
          text: decodeQp(rest.join('\n\n')),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe.each(testDialects())('alerts on $name', (dialect) => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let h: Harness;
  let config: Partial<Config>;
  let r: ReturnType<typeof rows>;

  beforeAll(async () => {
    receiver = await startReceiver();
    smtp = await startSmtp();
  });
  afterAll(async () => {
    await receiver.close();
    await smtp.close();
  });

  beforeEach(async () => {
    config = {
      webRoot: 'https://signalbox.example/',
      alertTimeout: 1,
      emailAlert: true,
      emailHost: '127.0.0.1',
      emailPort: smtp.port,
      emailSender: 'signalbox@example.test',
      telegramAlert: true,
      telegramToken: TG_TOKEN,
      telegramChat: '-100global',
      telegramUrl: `${receiver.base}/telegram`,
      slackAlert: true,
      slackUrl: `${receiver.base}/slack/${SLACK_SECRET}`,
      rocketchatAlert: true,
      rocketchatUrl: `${receiver.base}/rocketchat/hook`,
      microsoftTeamsAlert: true,
      microsoftTeamsUrl: `${receiver.base}/accepted/teams`,
      dingtalkAlert: true,
      dingtalkUrl: `${receiver.base}/dingtalk/robot/send?access_token=x`,
      gotifyAlert: true,
      gotifyUrl: `${receiver.base}/gotify/`,
      gotifyToken: GOTIFY_TOKEN,
    };
    h = await createHarness(dialect, config);
    r = rows(h.deps.db, h.deps.dialect);
    receiver.received.length = 0;
    smtp.mails.length = 0;
  });
  afterEach(async () => {
    await h.close();
  });

  /** A project with alerts on, members with and without the user alert flag, and one task. */
  async function scene(opts: { alert?: number; suppress?: number; alertChat?: string | null } = {}) {
    const projectId = await r.project({
      name: 'Payments',
      alert: opts.alert ?? 1,
      alert_chat: opts.alertChat ?? null,
    });
    const templateId = await r.template(projectId, {
      name: 'Deploy API',
      suppress_success_alerts: opts.suppress ?? 0,
    });
    const author = await h.userClient({ username: 'alice' });
    const quiet = await h.userClient({ username: 'quiet' });
    const admin = await h.userClient({ username: 'root', admin: true });
    const outsider = await h.userClient({ username: 'outsider' });
    await h.deps.db
      .updateTable('user')
      .set({ alert: 1 })
      .where('id', 'in', [author.userId, admin.userId, outsider.userId])
      .execute();
    for (const member of [author, quiet, admin]) {
      await h.deps.db
        .insertInto('project_user')
        .values({
          project_id: projectId,
          user_id: member.userId,
          role: 'owner',
          created: new Date().toISOString(),
        })
        .execute();
    }
    const taskId = await r.task(projectId, templateId, {
      status: 'running',
      user_id: author.userId,
      version: '1.4.2',
    });
    return { projectId, templateId, taskId, author, admin };
  }

  async function publish(s: { projectId: number; templateId: number; taskId: number }, status: string) {
    h.deps.bus.publish({
      type: 'update',
      project_id: s.projectId,
      template_id: s.templateId,
      task_id: s.taskId,
      status,
      start: null,
      end: null,
      version: '1.4.2',
    });
    await alertsIdle(h.deps);
  }

  const byPrefix = (prefix: string) => receiver.received.filter((x) => x.path.startsWith(prefix));

  it('a failed task mails the members who want alerts and posts to every chat kind', async () => {
    const s = await scene();
    await publish(s, 'error');

    expect(smtp.mails.map((m) => m.to).sort()).toEqual([['alice@example.test'], ['root@example.test']]);
    const mail = smtp.mails[0]!;
    expect(mail.subject).toBe("Task 'Deploy API' failed");
    const link = `https://signalbox.example/project/${s.projectId}/history?t=${s.taskId}`;
    for (const part of [
      'Project: Payments',
      'Template: Deploy API',
      `Task: #${s.taskId}`,
      link,
      'Version: 1.4.2',
    ])
      expect(mail.text).toContain(part);
    expect(mail.text).toContain('Author: Name alice');

    expect(receiver.received).toHaveLength(6);
    for (const x of receiver.received) expect(x.method).toBe('POST');
    const [tg] = byPrefix('/telegram/');
    expect(tg!.path).toBe(`/telegram/bot${TG_TOKEN}/sendMessage`);
    expect(tg!.body).toMatchObject({ chat_id: '-100global' });
    expect(tg!.body.text).toContain("Task 'Deploy API' failed");
    expect(tg!.body.text).toContain(link);
    expect(tg!.body.text).toContain('Author: Name alice');

    const [slack] = byPrefix('/slack/');
    expect(slack!.path).toBe(`/slack/${SLACK_SECRET}`);
    expect(slack!.body.text).toBe("Task 'Deploy API' failed");
    expect(JSON.stringify(slack!.body.attachments)).toContain(link);

    const [rocket] = byPrefix('/rocketchat/');
    expect(rocket!.body.text).toBe("Task 'Deploy API' failed");

    const [teams] = byPrefix('/accepted/teams');
    expect(teams!.body).toMatchObject({ '@type': 'MessageCard', title: "Task 'Deploy API' failed" });
    expect(JSON.stringify(teams!.body)).toContain(link);

    const [ding] = byPrefix('/dingtalk/');
    expect(ding!.path).toBe('/dingtalk/robot/send?access_token=x');
    expect(ding!.body).toMatchObject({
      msgtype: 'markdown',
      markdown: { title: "Task 'Deploy API' failed" },
    });

    const [gotify] = byPrefix('/gotify/');
    expect(gotify!.path).toBe(`/gotify/message?token=${GOTIFY_TOKEN}`);
    expect(gotify!.body).toMatchObject({ title: "Task 'Deploy API' failed", priority: 8 });
    expect(String(gotify!.body.message)).toContain('Version: 1.4.2');

    // Teams answered 202: that is a success, so nothing was logged as undelivered.
    expect(h.logLines.some((l) => l.includes('alert not delivered'))).toBe(false);
  });

  it('success, waiting_confirmation and waiting_approval go to chat only; repeated updates alert once', async () => {
    const s = await scene();
    await publish(s, 'success');
    await publish(s, 'success');
    expect(smtp.mails).toHaveLength(0);
    expect(receiver.received).toHaveLength(6);
    expect(byPrefix('/telegram/')[0]!.body.text).toContain("Task 'Deploy API' succeeded");

    receiver.received.length = 0;
    await publish(s, 'waiting_confirmation');
    expect(smtp.mails).toHaveLength(0);
    expect(receiver.received).toHaveLength(6);
    expect(byPrefix('/slack/')[0]!.body.text).toBe("Task 'Deploy API' is waiting for confirmation");

    receiver.received.length = 0;
    await publish(s, 'waiting_approval');
    expect(smtp.mails).toHaveLength(0);
    expect(receiver.received).toHaveLength(6);
    expect(byPrefix('/slack/')[0]!.body.text).toBe(
      "Task 'Deploy API' started by an AI agent is waiting for approval",
    );

    receiver.received.length = 0;
    for (const status of ['waiting', 'starting', 'running', 'stopping', 'stopped', 'confirmed'])
      await publish(s, status);
    expect(receiver.received).toHaveLength(0);
  });

  it('a task waiting for confirmation of a plan says its counts in every channel', async () => {
    Object.assign(h.deps.config, { webhookAlert: true, webhookUrl: `${receiver.base}/hook/in` });
    const s = await scene();
    const counts = { add: 2, change: 1, destroy: 3, replace: 1, read: 0, no_op: 4 };
    await saveTaskPlan(
      h.deps.db,
      null,
      { id: s.taskId, project_id: s.projectId },
      {
        format_version: '1.2',
        counts,
        drift: 0,
        changes: [],
        omitted: 0,
      },
    );
    await publish(s, 'waiting_confirmation');
    const line = 'Plan: 2 to add, 1 to change, 1 to replace, 3 to destroy';
    expect(byPrefix('/telegram/')[0]!.body.text).toContain(line);
    expect(String(byPrefix('/gotify/')[0]!.body.message)).toContain(line);
    expect(byPrefix('/hook/')[0]!.body).toMatchObject({ status: 'waiting_confirmation', plan: counts });
    // Other alerts of the task do not repeat the plan.
    receiver.received.length = 0;
    await publish(s, 'error');
    expect(byPrefix('/telegram/')[0]!.body.text).not.toContain('Plan:');
    expect(smtp.mails[0]!.text).not.toContain('Plan:');
  });

  it('honours suppress_success_alerts (failures still alert)', async () => {
    const s = await scene({ suppress: 1 });
    await publish(s, 'success');
    expect(receiver.received).toHaveLength(0);
    await publish(s, 'error');
    expect(receiver.received).toHaveLength(6);
    expect(smtp.mails).toHaveLength(2);
  });

  it('a success after a failed run is a recovery: mailed and posted even with success alerts suppressed', async () => {
    const s = await scene({ suppress: 1 });
    // The scene's task failed; the next run of the template succeeds.
    await h.deps.db.updateTable('task').set({ status: 'error' }).where('id', '=', s.taskId).execute();
    const next = {
      ...s,
      taskId: await r.task(s.projectId, s.templateId, { status: 'running', user_id: s.author.userId }),
    };
    await h.deps.db.updateTable('task').set({ status: 'success' }).where('id', '=', next.taskId).execute();
    await publish(next, 'success');
    const heading = "Task 'Deploy API' succeeded again after a failure";
    expect(smtp.mails.map((m) => m.subject)).toEqual([heading, heading]);
    expect(smtp.mails[0]!.text).toContain('Status: success (the previous run failed)');
    expect(smtp.mails[0]!.text).toContain(`Task: #${next.taskId}`);
    expect(receiver.received).toHaveLength(6);
    expect(byPrefix('/slack/')[0]!.body.text).toBe(heading);

    // A success after a success is an ordinary (here suppressed) success again.
    smtp.mails.length = 0;
    receiver.received.length = 0;
    const third = { ...s, taskId: await r.task(s.projectId, s.templateId, { status: 'success' }) };
    await publish(third, 'success');
    expect(receiver.received).toHaveLength(0);
    expect(smtp.mails).toHaveLength(0);
  });

  it('sends nothing when the project has alerts off', async () => {
    const s = await scene({ alert: 0 });
    for (const status of ['error', 'success', 'waiting_confirmation']) await publish(s, status);
    expect(receiver.received).toHaveLength(0);
    expect(smtp.mails).toHaveLength(0);
  });

  it("uses the project's alert_chat for Telegram", async () => {
    const s = await scene({ alertChat: '-100project' });
    await publish(s, 'error');
    expect(byPrefix('/telegram/')[0]!.body.chat_id).toBe('-100project');
  });

  it('a failing, hanging or unreachable sender is logged without secrets and breaks nothing', async () => {
    Object.assign(h.deps.config, {
      slackUrl: `${receiver.base}/fail/slack/${SLACK_SECRET}`,
      microsoftTeamsUrl: `${receiver.base}/hang/teams`,
      telegramUrl: `${receiver.base}/fail/telegram`,
      gotifyUrl: 'http://127.0.0.1:9/gotify', // nothing listens on the discard port
      emailPort: 9,
    });
    const s = await scene();
    const started = Date.now();
    await publish(s, 'error');
    expect(Date.now() - started).toBeLessThan(5000);
    // The healthy channels were still delivered.
    expect(byPrefix('/rocketchat/')).toHaveLength(1);
    expect(byPrefix('/dingtalk/')).toHaveLength(1);
    const failures = h.logLines.filter((l) => l.includes('alert not delivered'));
    const channels = failures.map((l) => JSON.parse(l).channel).sort();
    expect(channels).toEqual(['email', 'gotify', 'microsoft_teams', 'slack', 'telegram']);
    expect(failures.find((l) => l.includes('"slack"'))).toContain('HTTP 500');
    expect(failures.find((l) => l.includes('microsoft_teams'))).toContain('timed out');
    // Every send is counted by channel and result.
    const sends = (await h.deps.metrics.alertSends.get()).values;
    expect(Object.fromEntries(sends.map((v) => [`${v.labels.channel}:${v.labels.result}`, v.value]))).toEqual(
      {
        'dingtalk:sent': 1,
        'email:failed': 1,
        'gotify:failed': 1,
        'microsoft_teams:failed': 1,
        'rocketchat:sent': 1,
        'slack:failed': 1,
        'telegram:failed': 1,
      },
    );
    for (const line of h.logLines) {
      for (const secret of [TG_TOKEN, GOTIFY_TOKEN, SLACK_SECRET]) expect(line).not.toContain(secret);
    }
    // The task itself is untouched and the next alert still goes out.
    const task = await h.deps.db
      .selectFrom('task')
      .select('status')
      .where('id', '=', s.taskId)
      .executeTakeFirstOrThrow();
    expect(task.status).toBe('running');
    await publish(s, 'success');
    expect(byPrefix('/rocketchat/')).toHaveLength(2);
  });

  it('a generic webhook gets every alert as signed JSON; off or without a URL it sends nothing', async () => {
    const secret = 'generic-webhook-signing-key';
    Object.assign(h.deps.config, {
      webhookAlert: true,
      webhookUrl: `${receiver.base}/hook/in`,
      webhookSecret: secret,
    });
    const s = await scene();
    await publish(s, 'error');
    const [hook] = byPrefix('/hook/');
    expect(receiver.received).toHaveLength(7);
    expect(hook!.method).toBe('POST');
    expect(hook!.headers['content-type']).toBe('application/json');
    expect(hook!.body).toEqual({
      event: 'task',
      status: 'error',
      title: "Task 'Deploy API' failed",
      text: expect.stringContaining(`Task: #${s.taskId}`),
      project: { id: s.projectId, name: 'Payments' },
      template: { name: 'Deploy API' },
      task: { id: s.taskId, version: '1.4.2' },
      author: 'Name alice',
      url: `https://signalbox.example/project/${s.projectId}/history?t=${s.taskId}`,
    });
    // The signature is the HMAC-SHA256 of the exact bytes received, and the secret itself is never sent.
    const expected = `sha256=${createHmac('sha256', secret).update(hook!.raw).digest('hex')}`;
    expect(hook!.headers['x-signalbox-signature']).toBe(expected);
    for (const x of receiver.received) expect(JSON.stringify(x), x.path).not.toContain(secret);

    // Without a secret: no signature header.
    receiver.received.length = 0;
    Object.assign(h.deps.config, { webhookSecret: '' });
    await publish(s, 'success');
    expect(byPrefix('/hook/')[0]!.body).toMatchObject({ status: 'success', event: 'task' });
    expect(byPrefix('/hook/')[0]!.headers['x-signalbox-signature']).toBeUndefined();

    // Switched off, or on without a URL: nothing goes to it.
    for (const off of [{ webhookAlert: false }, { webhookAlert: true, webhookUrl: '' }]) {
      Object.assign(h.deps.config, { webhookUrl: `${receiver.base}/hook/in` }, off);
      receiver.received.length = 0;
      const next = { ...s, taskId: await r.task(s.projectId, s.templateId, { status: 'running' }) };
      await publish(next, 'error');
      expect(receiver.received).toHaveLength(6);
      expect(byPrefix('/hook/')).toHaveLength(0);
    }
  });

  it('Microsoft Teams 200 and 202 both count as delivered; other channels need 2xx', async () => {
    Object.assign(h.deps.config, { microsoftTeamsUrl: `${receiver.base}/teams-200` });
    const s = await scene();
    await publish(s, 'error');
    expect(byPrefix('/teams-200')).toHaveLength(1);
    expect(h.logLines.some((l) => l.includes('alert not delivered'))).toBe(false);
  });

  it('a disabled or incomplete channel sends nothing', async () => {
    Object.assign(h.deps.config, {
      slackAlert: false,
      gotifyToken: '',
      emailAlert: false,
    });
    const s = await scene();
    await publish(s, 'error');
    expect(byPrefix('/slack/')).toHaveLength(0);
    expect(byPrefix('/gotify/')).toHaveLength(0);
    expect(smtp.mails).toHaveLength(0);
    expect(receiver.received).toHaveLength(4);
  });

  describe('POST /api/project/:id/notifications/test', () => {
    let owner: Client;
    let team: Awaited<ReturnType<Harness['projectWithTeam']>>;
    const url = (id: number) => `/api/project/${id}/notifications/test`;

    beforeEach(async () => {
      owner = await h.userClient({ username: 'owner1', can_create_project: true });
      team = await h.projectWithTeam(owner, 'Alerts project');
      await h.deps.db.updateTable('project').set({ alert: 1 }).where('id', '=', team.projectId).execute();
      await h.deps.db.updateTable('user').set({ alert: 1 }).where('id', '=', owner.userId).execute();
    });

    it('sends one test alert through every enabled channel', async () => {
      const res = await owner.post(url(team.projectId));
      expect(res.statusCode).toBe(204);
      expect(receiver.received).toHaveLength(6);
      expect(byPrefix('/telegram/')[0]!.body.text).toContain('Test alert from Signalbox');
      expect(byPrefix('/telegram/')[0]!.body.text).toContain("project 'Alerts project'");
      expect(smtp.mails).toEqual([
        expect.objectContaining({ to: ['owner1@example.test'], subject: 'Test alert from Signalbox' }),
      ]);
    });

    it('refuses a second test alert of the same user and project within 30 s, naming the wait', async () => {
      expect((await owner.post(url(team.projectId))).statusCode).toBe(204);
      receiver.received.length = 0;
      const again = await owner.post(url(team.projectId));
      expect(again.statusCode).toBe(429);
      expect(again.json().error).toMatch(
        /^A test alert was sent less than 30 seconds ago; try again in \d+ s$/,
      );
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
      expect(receiver.received).toHaveLength(0);
      // Another member who may send one is not held up.
      const admin = await h.userClient({ admin: true });
      expect((await admin.post(url(team.projectId))).statusCode).toBe(204);
    });

    it('names the configured channels in the server info, never their addresses or tokens', async () => {
      const info = await owner.get('/api/info');
      expect(info.statusCode).toBe(200);
      // The harness configures every channel but the webhook.
      expect(info.json().alert_channels).toEqual([
        'email',
        'telegram',
        'slack',
        'rocketchat',
        'microsoft_teams',
        'dingtalk',
        'gotify',
      ]);
      expect(info.body).not.toContain(receiver.base);
      expect(info.body).not.toContain(TG_TOKEN);
      Object.assign(h.deps.config, { slackAlert: false, emailAlert: false });
      expect((await owner.get('/api/info')).json().alert_channels).not.toContain('slack');
    });

    it('answers 409 when the project has alerts off, and sends nothing', async () => {
      await h.deps.db.updateTable('project').set({ alert: 0 }).where('id', '=', team.projectId).execute();
      const res = await owner.post(url(team.projectId));
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ error: 'Alerts are disabled for this project' });
      expect(receiver.received).toHaveLength(0);
      expect(smtp.mails).toHaveLength(0);
    });

    it('still answers 204 when every channel fails', async () => {
      Object.assign(h.deps.config, {
        slackUrl: `${receiver.base}/fail/s`,
        rocketchatUrl: `${receiver.base}/fail/r`,
        emailPort: 9,
      });
      const res = await owner.post(url(team.projectId));
      expect(res.statusCode).toBe(204);
      expect(h.logLines.filter((l) => l.includes('alert not delivered')).length).toBeGreaterThanOrEqual(3);
    });

    it('needs updateProject: permission matrix', async () => {
      const admin = await h.userClient({ admin: true });
      const outsider = await h.userClient();
      const cases: [string, Client, number][] = [
        ['admin', admin, 204],
        ['owner', team.members.owner, 204],
        ['manager', team.members.manager, 403],
        ['task_runner', team.members.task_runner, 403],
        ['guest', team.members.guest, 403],
        ['non-member', outsider, 403],
        ['anonymous', h.anonymous(), 401],
      ];
      for (const [who, client, status] of cases) {
        receiver.received.length = 0;
        const res = await client.post(url(team.projectId));
        expect([who, res.statusCode]).toEqual([who, status]);
        if (status !== 204) {
          expect(res.json()).toHaveProperty('error');
          expect(receiver.received).toHaveLength(0);
        } else expect(receiver.received).toHaveLength(6);
      }
    });

    it('unknown project 404, bad id 400, malformed JSON body 400', async () => {
      expect((await owner.post(url(999_999))).statusCode).toBe(404);
      expect((await owner.post('/api/project/abc/notifications/test')).statusCode).toBe(400);
      const bad = await owner.request('POST', url(team.projectId), '{"oops":');
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ error: 'Request body is not valid JSON' });
      expect(receiver.received).toHaveLength(0);
    });

    it('another project of which the caller is not a member is refused', async () => {
      const other = await h.userClient({ can_create_project: true });
      const otherTeam = await h.projectWithTeam(other, 'Other');
      await h.deps.db
        .updateTable('project')
        .set({ alert: 1 })
        .where('id', '=', otherTeam.projectId)
        .execute();
      const res = await owner.post(url(otherTeam.projectId));
      expect(res.statusCode).toBe(403);
      expect(receiver.received).toHaveLength(0);
    });
  });
});
