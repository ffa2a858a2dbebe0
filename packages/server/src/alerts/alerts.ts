import type { Deps } from '../deps';
import type { LiveMessage } from '../live/bus';
import { findTaskPlan } from '../tasks/store';
import { takeDriftAlert } from '../tasks/terraform-plans.store';
import { alertRecipients, previousFinishedStatus, taskAlertContext } from './alerts.store';
import {
  type Alert,
  type AlertKind,
  type Channel,
  chatRequests,
  emailMessage,
  failureReason,
  mailTransport,
  postJson,
} from './senders';

const ALERT_STATUSES = new Set<string>(['error', 'success', 'waiting_confirmation', 'waiting_approval']);
/** How many (task, status) pairs are remembered so a repeated `update` with the same status alerts once. */
const SEEN_LIMIT = 5000;

/** Alert work in progress per app, so tests (and shutdown) can wait for it. */
const inFlight = new WeakMap<Deps, Set<Promise<void>>>();

function track(deps: Deps, work: Promise<void>) {
  const set = inFlight.get(deps) ?? new Set<Promise<void>>();
  inFlight.set(deps, set);
  set.add(work);
  void work.finally(() => set.delete(work));
}

/** Resolves when every alert started so far has been sent or given up. */
export async function alertsIdle(deps: Deps): Promise<void> {
  const set = inFlight.get(deps);
  while (set && set.size > 0) await Promise.allSettled([...set]);
}

export const taskUrl = (deps: Deps, projectId: number, taskId: number) =>
  `${deps.config.webRoot.replace(/\/+$/, '')}/project/${projectId}/history?t=${taskId}`;

/** The alert channels the configuration switches on (each with what it needs to send). */
export function enabledAlertChannels(config: Deps['config']): string[] {
  const on: [string, boolean][] = [
    ['email', config.emailAlert],
    ['telegram', config.telegramAlert && !!config.telegramToken],
    ['slack', config.slackAlert && !!config.slackUrl],
    ['rocketchat', config.rocketchatAlert && !!config.rocketchatUrl],
    ['microsoft_teams', config.microsoftTeamsAlert && !!config.microsoftTeamsUrl],
    ['dingtalk', config.dingtalkAlert && !!config.dingtalkUrl],
    ['gotify', config.gotifyAlert && !!config.gotifyUrl && !!config.gotifyToken],
    ['webhook', config.webhookAlert && !!config.webhookUrl],
  ];
  return on.filter(([, enabled]) => enabled).map(([name]) => name);
}

/**
 * Alerts link to the task in the console by SIGNALBOX_WEB_ROOT. Without it the links are relative (no reader of an
 * e-mail or chat can open them), and the server cannot tell its public address itself: a request's Host header is
 * the sender's to choose, so an alert link built from it could point anywhere. Says so once at start when alerts
 * are on.
 */
function warnOfRelativeLinks(deps: Deps) {
  if (deps.config.webRoot) return;
  const channels = enabledAlertChannels(deps.config);
  if (channels.length === 0) return;
  deps.log.warn(
    { channels },
    "alert links are relative because SIGNALBOX_WEB_ROOT is not set: set it to the console's public URL (e.g. https://signalbox.example.com/) so that alerts link to their tasks",
  );
}

/**
 * E-mail and chat alerts on task results. Subscribes to the bus; returns an unsubscribe.
 * E-mail on `error`; chat on `error`, `success` (unless the template suppresses it), `waiting_confirmation` and
 * `waiting_approval` (a run an AI agent started waits for a person).
 * A success right after the template's previous finished run failed is a `recovered` alert: it goes to e-mail
 * and chat even when success alerts are suppressed, so whoever heard of the failure hears it is fixed.
 */
export function startAlerts(deps: Deps): () => void {
  warnOfRelativeLinks(deps);
  const seen = new Set<string>();
  const listener = (message: LiveMessage) => {
    if (message.type !== 'update' || !ALERT_STATUSES.has(message.status)) return;
    const key = `${message.task_id}:${message.status}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
    const work = alertForTask(deps, message.task_id, message.status as AlertKind).catch((err: Error) => {
      deps.log.error({ taskId: message.task_id, err: failureReason(err) }, 'alert failed');
    });
    track(deps, work);
  };
  deps.bus.on('live', listener);
  return () => {
    deps.bus.off('live', listener);
  };
}

async function alertForTask(deps: Deps, taskId: number, status: AlertKind) {
  const ctx = await taskAlertContext(deps.db, taskId);
  if (ctx?.alert !== 1) return;
  const kind: AlertKind =
    status === 'success' && (await previousFinishedStatus(deps.db, ctx.template_id, taskId)) === 'error'
      ? 'recovered'
      : status;
  const author =
    ctx.user_name ||
    ctx.user_username ||
    (ctx.schedule_id ? 'schedule' : ctx.integration_id ? 'integration' : '');
  const alert: Alert = {
    kind,
    projectId: ctx.project_id,
    projectName: ctx.project_name,
    taskId,
    templateName: ctx.template_name,
    url: taskUrl(deps, ctx.project_id, taskId),
    version: ctx.version,
    author,
    chatId: ctx.alert_chat || deps.config.telegramChat,
  };
  // Whoever is asked to confirm a plan reads what it changes in the alert.
  if (kind === 'waiting_confirmation') {
    const plan = await findTaskPlan(deps.db, ctx.project_id, taskId);
    if (plan) alert.plan = plan.counts;
  }
  const email = kind === 'error' || kind === 'recovered';
  const chat = !(kind === 'success' && ctx.suppress_success_alerts === 1);
  await deliver(deps, alert, { email, chat });
  // A drift check that found the template drifting (or drifting in other resources): said in every channel, once.
  if (status === 'success') {
    const drift = await takeDriftAlert(deps.db, taskId);
    if (drift)
      await deliver(
        deps,
        {
          ...alert,
          kind: 'drift',
          url: templateUrl(deps, ctx.project_id, ctx.template_id),
          drift: {
            since: drift.since,
            resources: drift.report.resources ?? [],
            omitted: drift.report.omitted ?? 0,
          },
        },
        { email: true, chat: true },
      );
  }
}

/** The template's page in the console (its drift view). */
const templateUrl = (deps: Deps, projectId: number, templateId: number) =>
  `${deps.config.webRoot.replace(/\/+$/, '')}/project/${projectId}/templates/${templateId}`;

/** Sends a test alert through every enabled channel; resolves to the channels that were tried. */
export async function sendTestAlert(
  deps: Deps,
  project: { id: number; name: string; alert_chat: string | null },
  senderName: string,
): Promise<Channel[]> {
  const alert: Alert = {
    kind: 'test',
    projectId: project.id,
    projectName: project.name,
    taskId: null,
    templateName: '',
    url: deps.config.webRoot
      ? `${deps.config.webRoot.replace(/\/+$/, '')}/project/${project.id}/history`
      : '',
    version: null,
    author: senderName,
    chatId: project.alert_chat || deps.config.telegramChat,
  };
  const work = deliver(deps, alert, { email: true, chat: true });
  track(
    deps,
    work.then(() => undefined),
  );
  return work;
}

/** Every send is independent: one failing or hanging channel is logged and never stops the others. */
async function deliver(
  deps: Deps,
  alert: Alert,
  what: { email: boolean; chat: boolean },
): Promise<Channel[]> {
  const config = deps.config;
  const timeoutMs = config.alertTimeout * 1000;
  const sends: [Channel, Promise<unknown>][] = [];
  if (what.chat) {
    for (const [channel, request] of chatRequests(config, alert))
      sends.push([channel, postJson(request, timeoutMs)]);
  }
  if (what.email && config.emailAlert) sends.push(['email', sendMail(deps, alert, timeoutMs)]);
  // Every send settles (a failure becomes its reason), so all are waited for before the failures are logged.
  const failures = await Promise.all(
    sends.map(([channel, p]) =>
      p.then(
        () => null,
        (reason: unknown) => ({ channel, reason }),
      ),
    ),
  );
  for (const [i, failure] of failures.entries())
    deps.metrics.alertSends.inc({ channel: sends[i]?.[0] ?? 'unknown', result: failure ? 'failed' : 'sent' });
  for (const failure of failures) {
    if (!failure) continue;
    deps.log.warn(
      {
        channel: failure.channel,
        projectId: alert.projectId,
        taskId: alert.taskId,
        reason: failureReason(failure.reason),
      },
      'alert not delivered',
    );
  }
  return sends.map(([channel]) => channel);
}

async function sendMail(deps: Deps, alert: Alert, timeoutMs: number) {
  const recipients = await alertRecipients(deps.db, alert.projectId);
  if (recipients.length === 0) return;
  const transport = await mailTransport(deps.config, timeoutMs);
  const { subject, text } = emailMessage(alert);
  let failure: unknown;
  try {
    // One message per person: members do not see each other's addresses.
    for (const r of recipients) {
      try {
        await transport.sendMail({ from: deps.config.emailSender, to: r.email, subject, text });
      } catch (err) {
        failure = err;
      }
    }
  } finally {
    transport.close();
  }
  if (failure) throw failure;
}

export const workflowRunUrl = (deps: Pick<Deps, 'config'>, projectId: number, runId: number) =>
  `${deps.config.webRoot.replace(/\/+$/, '')}/project/${projectId}/workflow-runs/${runId}`;

/**
 * Tells the project's alert channels (chat, and e-mail to members with alerts on) that a workflow's approval node
 * waits, with a link to the run. Only when the project has alerts on.
 */
export async function alertWorkflowApproval(
  deps: Deps,
  what: {
    projectId: number;
    runId: number;
    workflowName: string;
    nodeName: string;
    note: string;
    author: string;
  },
) {
  const project = await deps.db
    .selectFrom('project')
    .select(['name', 'alert', 'alert_chat'])
    .where('id', '=', what.projectId)
    .executeTakeFirst();
  if (project?.alert !== 1) return;
  const alert: Alert = {
    kind: 'workflow_approval',
    projectId: what.projectId,
    projectName: project.name,
    taskId: null,
    templateName: what.workflowName,
    url: workflowRunUrl(deps, what.projectId, what.runId),
    version: null,
    author: what.author,
    chatId: project.alert_chat || deps.config.telegramChat,
    runId: what.runId,
    nodeName: what.nodeName,
    note: what.note,
  };
  const work = deliver(deps, alert, { email: true, chat: true }).then(() => undefined);
  track(deps, work);
  await work;
}
