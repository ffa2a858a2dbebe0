import { createHmac } from 'node:crypto';
import { type DriftResource, type PlanSummary, planCountsText } from '@signalbox/contracts';
import type { Config } from '../config';

/** `recovered`: a success right after the template's previous finished run failed. */
export type AlertKind =
  | 'error'
  | 'success'
  | 'recovered'
  | 'waiting_confirmation'
  | 'waiting_approval'
  | 'drift'
  | 'workflow_approval'
  | 'test';

/** One alert, already resolved from the task, template and project rows. */
export type Alert = {
  kind: AlertKind;
  projectId: number;
  projectName: string;
  taskId: number | null;
  templateName: string;
  url: string;
  version: string | null;
  author: string;
  /** Telegram chat: the project's alert_chat, or the configured one. */
  chatId: string;
  /** The counts of the plan a waiting_confirmation task asks to apply (absent: none kept). */
  plan?: PlanSummary['counts'];
  /** What a drift check found (a `drift` alert): since when, and the drifted resources (names, never values). */
  drift?: { since: string | null; resources: DriftResource[]; omitted: number };
  /** workflow_approval: the run, the node waiting and what it tells approvers. */
  runId?: number;
  nodeName?: string;
  note?: string;
};

export type Channel =
  | 'email'
  | 'telegram'
  | 'slack'
  | 'rocketchat'
  | 'microsoft_teams'
  | 'dingtalk'
  | 'gotify'
  | 'webhook';

const colors: Record<AlertKind, string> = {
  error: '#d32f2f',
  success: '#388e3c',
  recovered: '#388e3c',
  waiting_confirmation: '#f57c00',
  waiting_approval: '#f57c00',
  drift: '#f57c00',
  workflow_approval: '#f57c00',
  test: '#1976d2',
};

export function title(alert: Alert): string {
  switch (alert.kind) {
    case 'error':
      return `Task '${alert.templateName}' failed`;
    case 'success':
      return `Task '${alert.templateName}' succeeded`;
    case 'recovered':
      return `Task '${alert.templateName}' succeeded again after a failure`;
    case 'waiting_confirmation':
      return `Task '${alert.templateName}' is waiting for confirmation`;
    case 'waiting_approval':
      return `Task '${alert.templateName}' started by an AI agent is waiting for approval`;
    case 'drift':
      return `Template '${alert.templateName}' has drifted from its configuration`;
    case 'workflow_approval':
      return `Workflow '${alert.templateName}' is waiting for your approval`;
    default:
      return 'Test alert from Signalbox';
  }
}

const statusText: Record<AlertKind, string> = {
  error: 'failed',
  success: 'success',
  recovered: 'success (the previous run failed)',
  waiting_confirmation: 'waiting for confirmation',
  waiting_approval: 'waiting for approval',
  drift: 'drifted',
  workflow_approval: 'waiting for approval',
  test: 'test',
};

/** The plain-text body shared by every channel. */
export function bodyLines(alert: Alert): string[] {
  if (alert.kind === 'test') {
    return [
      `This is a test alert for project '${alert.projectName}'.`,
      `Sent by: ${alert.author}`,
      ...(alert.url ? [`Link: ${alert.url}`] : []),
    ];
  }
  if (alert.kind === 'drift' && alert.drift) {
    const d = alert.drift;
    const count = d.resources.length + d.omitted;
    return [
      `Project: ${alert.projectName}`,
      `Template: ${alert.templateName}`,
      `Drift check: task #${alert.taskId}`,
      `Drifted since: ${d.since ?? '-'}`,
      `Resources: ${count}`,
      ...d.resources
        .slice(0, 10)
        .map(
          (r) =>
            `- ${r.address} (${r.kind === 'drift' ? 'changed outside Terraform' : `plan: ${r.action}`})${r.paths.length ? `: ${r.paths.slice(0, 5).join(', ')}` : ''}`,
        ),
      ...(count > 10 ? [`… and ${count - 10} more`] : []),
      `Link: ${alert.url}`,
    ];
  }
  if (alert.kind === 'workflow_approval') {
    return [
      `Project: ${alert.projectName}`,
      `Workflow: ${alert.templateName}`,
      `Run: #${alert.runId ?? ''}, node ${alert.nodeName ?? ''}`,
      `Status: ${statusText[alert.kind]}`,
      ...(alert.note ? [`Message: ${alert.note}`] : []),
      `Author: ${alert.author || '-'}`,
      `Link: ${alert.url}`,
    ];
  }
  return [
    `Project: ${alert.projectName}`,
    `Template: ${alert.templateName}`,
    `Task: #${alert.taskId}`,
    `Status: ${statusText[alert.kind]}`,
    ...(alert.plan ? [`Plan: ${planCountsText(alert.plan)}`] : []),
    ...(alert.version ? [`Version: ${alert.version}`] : []),
    `Author: ${alert.author || '-'}`,
    `Link: ${alert.url}`,
  ];
}

export function emailMessage(alert: Alert) {
  return { subject: title(alert), text: `${bodyLines(alert).join('\n')}\n` };
}

type Request = {
  url: string;
  body: unknown;
  ok?: (status: number) => boolean;
  /** Extra headers computed from the exact JSON sent (e.g. a signature over it). */
  headers?: (payload: string) => Record<string, string>;
};

/** The HMAC-SHA256 of a webhook payload, as sent in `X-Signalbox-Signature` (GitHub's `sha256=<hex>` form). */
export const webhookSignature = (secret: string, payload: string) =>
  `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** The HTTP request each enabled chat channel sends for an alert (null when the channel is off or incomplete). */
/**
 * The channels this server's settings configure, in the order they are sent (names only, never their addresses
 * or tokens). Telegram counts when its token is set: the chat is the project's or the configured one.
 */
export function configuredChannels(config: Config): Channel[] {
  const probe: Alert = {
    kind: 'test',
    projectId: 0,
    projectName: '',
    taskId: null,
    templateName: '',
    url: '',
    version: null,
    author: '',
    chatId: 'any',
  };
  const channels = chatRequests(config, probe).map(([channel]) => channel);
  return config.emailAlert ? ['email', ...channels] : channels;
}

export function chatRequests(config: Config, alert: Alert): [Channel, Request][] {
  const heading = title(alert);
  const lines = bodyLines(alert);
  const text = `${heading}\n${lines.join('\n')}`;
  const color = colors[alert.kind];
  // Rocket.Chat takes Slack's incoming-webhook message as it is.
  const attachmentMessage = {
    text: heading,
    attachments: [{ color, title: heading, title_link: alert.url || undefined, text: lines.join('\n') }],
  };
  const out: [Channel, Request][] = [];
  if (config.telegramAlert && config.telegramToken && alert.chatId) {
    out.push([
      'telegram',
      {
        url: `${trimSlash(config.telegramUrl)}/bot${config.telegramToken}/sendMessage`,
        body: { chat_id: alert.chatId, text, disable_web_page_preview: true },
      },
    ]);
  }
  if (config.slackAlert && config.slackUrl) {
    out.push([
      'slack',
      {
        url: config.slackUrl,
        body: attachmentMessage,
      },
    ]);
  }
  if (config.rocketchatAlert && config.rocketchatUrl) {
    out.push([
      'rocketchat',
      {
        url: config.rocketchatUrl,
        body: attachmentMessage,
      },
    ]);
  }
  if (config.microsoftTeamsAlert && config.microsoftTeamsUrl) {
    out.push([
      'microsoft_teams',
      {
        url: config.microsoftTeamsUrl,
        ok: (status) => status === 200 || status === 202,
        body: {
          '@type': 'MessageCard',
          '@context': 'https://schema.org/extensions',
          summary: heading,
          themeColor: color.slice(1),
          title: heading,
          text: lines.join('<br>'),
          ...(alert.url
            ? {
                potentialAction: [
                  { '@type': 'OpenUri', name: 'Open task', targets: [{ os: 'default', uri: alert.url }] },
                ],
              }
            : {}),
        },
      },
    ]);
  }
  if (config.dingtalkAlert && config.dingtalkUrl) {
    out.push([
      'dingtalk',
      {
        url: config.dingtalkUrl,
        body: {
          msgtype: 'markdown',
          markdown: { title: heading, text: `### ${heading}\n\n${lines.join('\n\n')}` },
        },
      },
    ]);
  }
  if (config.gotifyAlert && config.gotifyUrl && config.gotifyToken) {
    out.push([
      'gotify',
      {
        url: `${trimSlash(config.gotifyUrl)}/message?token=${encodeURIComponent(config.gotifyToken)}`,
        body: {
          title: heading,
          message: lines.join('\n'),
          priority: alert.kind === 'error' ? 8 : 5,
          ...(alert.url ? { extras: { 'client::notification': { click: { url: alert.url } } } } : {}),
        },
      },
    ]);
  }
  if (config.webhookAlert && config.webhookUrl) {
    const secret = config.webhookSecret;
    out.push([
      'webhook',
      {
        url: config.webhookUrl,
        body: {
          event: alert.kind === 'test' ? 'test' : alert.kind === 'drift' ? 'drift' : 'task',
          status: alert.kind,
          title: heading,
          text: lines.join('\n'),
          project: { id: alert.projectId, name: alert.projectName },
          template: alert.kind === 'test' ? null : { name: alert.templateName },
          task: alert.taskId === null ? null : { id: alert.taskId, version: alert.version },
          author: alert.author || null,
          url: alert.url || null,
          ...(alert.plan ? { plan: alert.plan } : {}),
          ...(alert.drift
            ? {
                drift: {
                  since: alert.drift.since,
                  resources: alert.drift.resources.length + alert.drift.omitted,
                  addresses: alert.drift.resources.slice(0, 100).map((r) => r.address),
                },
              }
            : {}),
        },
        headers: (payload) => ({
          'user-agent': 'Signalbox',
          ...(secret ? { 'x-signalbox-signature': webhookSignature(secret, payload) } : {}),
        }),
      },
    ]);
  }
  return out;
}

/** Why a send failed, in words that never carry a URL, token or other secret. */
export function failureReason(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string }; responseCode?: number };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const code = e?.cause?.code ?? e?.code;
  if (code) return String(code);
  if (e?.responseCode) return `SMTP ${e.responseCode}`;
  return 'request failed';
}

/** POSTs one chat request; resolves to the HTTP status, throws on a network failure or an unwanted status. */
export async function postJson(request: Request, timeoutMs: number): Promise<number> {
  const payload = JSON.stringify(request.body);
  const res = await fetch(request.url, {
    method: 'POST',
    headers: { ...request.headers?.(payload), 'content-type': 'application/json' },
    body: payload,
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'error',
  });
  // Drain the body so the connection is released, but never let a slow body hold the alert.
  await res.arrayBuffer().catch(() => undefined);
  const ok = request.ok ?? ((status: number) => status >= 200 && status < 300);
  if (!ok(res.status)) throw Object.assign(new Error(`HTTP ${res.status}`), { code: `HTTP ${res.status}` });
  return res.status;
}

/**
 * SMTP transport from the e-mail settings (implicit TLS = email_tls, STARTTLS = email_secure). nodemailer is
 * loaded on the first e-mail: a server without e-mail alerts never needs it.
 */
export async function mailTransport(config: Config, timeoutMs: number) {
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport({
    host: config.emailHost,
    port: config.emailPort,
    secure: config.emailTls,
    requireTLS: config.emailSecure,
    ignoreTLS: !config.emailSecure && !config.emailTls,
    tls: { minVersion: 'TLSv1.2' },
    ...(config.emailUsername ? { auth: { user: config.emailUsername, pass: config.emailPassword } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
}
