import type { Db } from '../../db';
import { now, parseJson, parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { KeySourceError, keySecretOf } from '../../lib/key-sources';
import type { NewTask } from '../../ports';
import { storedDefaultParams, taskWithDefaults } from '../../tasks/run/default-params';
import { waitingIntegrationTasks } from '../../tasks/store';
import { findStoreKey } from '../keys';
import * as aliasStore from './aliases.store';
import * as deliveryStore from './deliveries.store';
import * as valueStore from './extract-values.store';
import * as integrationStore from './integrations.store';
import * as matcherStore from './matchers.store';
import { deliveryId, extract, matches, verifyAuth, type WebhookRequest } from './webhook.match';

/** What the receiver answers: 404 for an unknown alias, 401 when every candidate failed its check, else 204. */
export type WebhookOutcome = { status: 204 | 401 | 404; started: number[] };

const aliasPattern = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The auth secret: the key's login_password password, decrypted or read from the server (a source that cannot be
 * read is logged, naming the variable or file). Undefined when it cannot be read.
 */
async function readSecret(
  deps: Pick<Deps, 'db' | 'box' | 'config' | 'log'>,
  integration: integrationStore.IntegrationRow,
): Promise<string | undefined> {
  if (!integration.auth_secret_id) return undefined;
  const key = await findStoreKey(deps.db, integration.project_id, integration.auth_secret_id);
  if (!key) return undefined;
  if (key.source_storage_type) {
    try {
      return (await keySecretOf(deps, key)).password || undefined;
    } catch (err) {
      if (!(err instanceof KeySourceError)) throw err;
      deps.log.warn(
        { integrationId: integration.id, reason: err.message },
        'integration auth secret unreadable',
      );
      return undefined;
    }
  }
  if (!key.secret) return undefined;
  try {
    const secret = JSON.parse(deps.box.open(key.secret)) as {
      password?: unknown;
      login_password?: { password?: unknown };
    };
    const password = secret.login_password?.password ?? secret.password;
    return typeof password === 'string' ? password : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The task an integration starts: its stored default parameters, plus the extracted values. As in the peer,
 * environment keys set in the integration's own task parameters win over extracted ones.
 */
function buildTask(
  integration: integrationStore.IntegrationRow,
  request: WebhookRequest,
  rules: valueStore.ExtractValueRow[],
) {
  return taskWithDefaults(
    integration.template_id,
    storedDefaultParams(integration.task_params),
    extract(request, rules),
  );
}

/** How long an accepted delivery id blocks a redelivery of it. */
export const DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Key order does not matter when two tasks' values are compared. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return JSON.stringify(sorted(value)) ?? '';
}

/** Task params the task store sets itself (from the task's own flags), left out of the comparison. */
const storeSetParams = ['debug', 'dry_run', 'diff'];

const paramsKey = (params: Record<string, unknown>) =>
  canonical(Object.fromEntries(Object.entries(params).filter(([k]) => !storeSetParams.includes(k))));

/** A waiting task this integration started for its template with the same environment and params, if any. */
async function identicalWaitingTask(
  deps: Pick<Deps, 'db'>,
  integration: integrationStore.IntegrationRow,
  task: NewTask,
) {
  const environment = canonical(parseJson<unknown>(task.environment, {}));
  const params = paramsKey(task.params ?? {});
  const waiting = await waitingIntegrationTasks(deps.db, integration.template_id, integration.id);
  return waiting.find(
    (t) =>
      canonical(parseJson<unknown>(t.environment, {})) === environment &&
      paramsKey(parseJson<Record<string, unknown>>(t.params, {})) === params,
  );
}

/**
 * Per-integration chains of debounce check + task creation, so this process never queues two twins at once
 * (one set of chains per database: the twins are looked for there), each link also holding the integration's
 * debounce lock in the database against the other instances.
 */
const chains = new WeakMap<Db, Map<number, Promise<unknown>>>();

async function oneAtATime<T>(db: Db, integrationId: number, fn: () => Promise<T>): Promise<T> {
  let byIntegration = chains.get(db);
  if (!byIntegration) {
    byIntegration = new Map();
    chains.set(db, byIntegration);
  }
  const run = (byIntegration.get(integrationId) ?? Promise.resolve()).then(() =>
    underDebounceLock(db, integrationId, fn),
  );
  const tail = run.catch(() => {});
  byIntegration.set(integrationId, tail);
  try {
    return await run;
  } finally {
    if (byIntegration.get(integrationId) === tail) byIntegration.delete(integrationId);
  }
}

/** A holder of the debounce lock this long is taken for dead (it creates one task: milliseconds). */
export const DEBOUNCE_LOCK_STALE_MS = 30_000;
const DEBOUNCE_LOCK_RETRY_MS = 25;

/**
 * Runs `fn` holding the integration's debounce lock in the database, so that instances sharing it never both
 * find no twin and both start one. The wait is short (the holder creates one task); no connection is held while
 * waiting.
 */
async function underDebounceLock<T>(db: Db, integrationId: number, fn: () => Promise<T>): Promise<T> {
  let at = now();
  const stale = () => new Date(Date.parse(at) - DEBOUNCE_LOCK_STALE_MS).toISOString();
  while (!(await deliveryStore.takeDebounceLock(db, integrationId, at, stale()))) {
    await new Promise((r) => setTimeout(r, DEBOUNCE_LOCK_RETRY_MS));
    at = now();
  }
  try {
    return await fn();
  } finally {
    await deliveryStore.releaseDebounceLock(db, integrationId, at);
  }
}

/**
 * Starts the integration's task for an authenticated request, unless the sender redelivers a delivery id the
 * integration accepted within the last 24 hours, or an identical task of this integration is still waiting
 * (a running one does not count: the new task may see new commits). Skipping still answers 204.
 */
async function startTask(
  deps: Pick<Deps, 'db' | 'log' | 'startTask' | 'startWorkflow'>,
  integration: integrationStore.IntegrationRow,
  request: WebhookRequest,
): Promise<number | undefined> {
  const delivery = deliveryId(request);
  const at = now();
  if (delivery !== undefined) {
    const since = new Date(Date.parse(at) - DELIVERY_WINDOW_MS).toISOString();
    if (!(await deliveryStore.claimDelivery(deps.db, integration.id, delivery, at, since))) {
      deps.log.info(
        { rule: 'delivery_id', integration_id: integration.id, delivery_id: delivery },
        'integration request skipped: delivery already accepted',
      );
      return undefined;
    }
  }
  const task = buildTask(integration, request, await valueStore.listExtractValues(deps.db, integration.id));
  if (integration.workflow_id) {
    // A workflow's run: the extra variables (extracted values and the integration's own) answer its survey.
    try {
      return await deps.startWorkflow(
        integration.project_id,
        integration.workflow_id,
        parseJsonObject(task.environment),
        {
          source: 'integration',
          integrationId: integration.id,
          message: task.message ?? '',
        },
      );
    } catch (err) {
      if (delivery !== undefined) await deliveryStore.releaseDelivery(deps.db, integration.id, delivery, at);
      deps.log.warn(
        { integration_id: integration.id, err: err instanceof Error ? err.message : String(err) },
        'integration could not start its workflow',
      );
      return undefined;
    }
  }
  return oneAtATime(deps.db, integration.id, async () => {
    const twin = await identicalWaitingTask(deps, integration, task);
    if (twin) {
      deps.log.info(
        {
          rule: 'debounce',
          integration_id: integration.id,
          delivery_id: delivery ?? null,
          waiting_task_id: twin.id,
        },
        'integration request skipped: an identical task is already waiting',
      );
      return undefined;
    }
    try {
      return await deps.startTask(integration.project_id, task, {
        userId: null,
        integrationId: integration.id,
        source: 'integration',
      });
    } catch (err) {
      // One integration that cannot start (template gone, engine refusing) must not fail the others. Its
      // delivery id is forgotten so that redelivering it tries again.
      if (delivery !== undefined) await deliveryStore.releaseDelivery(deps.db, integration.id, delivery, at);
      deps.log.warn(
        { integration_id: integration.id, err: err instanceof Error ? err.message : String(err) },
        'integration could not start its task',
      );
      return undefined;
    }
  });
}

/**
 * Handles one call of `/api/integrations/{alias}`. A project-level alias runs every integration of the project
 * whose matchers all match (one without matchers never fires that way); an integration-level alias runs its
 * integration when all of its matchers match (one without matchers always fires that way). An integration whose
 * auth check fails is skipped and starts nothing.
 */
export async function handleWebhook(
  deps: Pick<Deps, 'db' | 'box' | 'config' | 'log' | 'startTask' | 'startWorkflow'>,
  alias: string,
  request: WebhookRequest,
): Promise<WebhookOutcome> {
  if (!aliasPattern.test(alias)) return { status: 404, started: [] };
  const found = await aliasStore.findAliasByValue(deps.db, alias);
  if (!found) return { status: 404, started: [] };

  let integrations: integrationStore.IntegrationRow[];
  if (found.integration_id != null) {
    const one = await integrationStore.findIntegration(deps.db, found.project_id, found.integration_id);
    if (!one) return { status: 404, started: [] };
    integrations = [one];
  } else {
    integrations = await integrationStore.listIntegrations(deps.db, found.project_id);
  }
  const projectLevel = found.integration_id == null;

  let candidates = 0;
  let rejected = 0;
  const started: number[] = [];
  for (const integration of integrations) {
    const rules = await matcherStore.listMatchers(deps.db, integration.id);
    if (projectLevel && rules.length === 0) continue;
    if (!rules.every((rule) => matches(request, rule))) continue;
    candidates += 1;
    if (!verifyAuth(request, integration, await readSecret(deps, integration))) {
      rejected += 1;
      deps.log.warn(
        { integration_id: integration.id, project_id: integration.project_id },
        'integration request failed its auth check',
      );
      continue;
    }
    const taskId = await startTask(deps, integration, request);
    if (taskId !== undefined) started.push(taskId);
  }
  if (candidates > 0 && rejected === candidates) return { status: 401, started };
  return { status: 204, started };
}
