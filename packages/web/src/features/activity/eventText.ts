import type { EventView } from '@signalbox/contracts';
import type { TFunction } from 'i18next';

/** Task statuses with a label of their own (status.* in the catalogue). */
const TASK_STATUSES = new Set([
  'waiting_approval',
  'waiting',
  'starting',
  'waiting_confirmation',
  'confirmed',
  'rejected',
  'running',
  'success',
  'error',
  'stopping',
  'stopped',
]);

/** Project roles with a label of their own (roles.* in the catalogue), as team events name them. */
const ROLES = new Set(['owner', 'manager', 'task_runner', 'guest']);

/**
 * Who acted: the user, else for a task event the schedule or integration that started the task, else '—'.
 */
export function eventActor(
  event: Pick<EventView, 'user_name' | 'username' | 'params'>,
  t: TFunction,
): string {
  const user = event.user_name ?? event.username;
  if (user) return user;
  const { schedule, integration } = event.params ?? {};
  if (typeof schedule === 'string' && schedule) return t('layout.bySchedule', { name: schedule });
  if (typeof integration === 'string' && integration) return t('layout.byIntegration', { name: integration });
  return '—';
}

/**
 * What an event says, in the reader's language: the catalogue's text for its kind (eventKinds.<kind>) with its
 * params, a task status and a project role as their labels; the server's English description for older events, kinds this console does
 * not know, and params that do not fit.
 */
export function eventText(
  event: Pick<EventView, 'kind' | 'params' | 'description'>,
  t: TFunction,
  exists: (key: string) => boolean,
): string {
  const { kind, params } = event;
  if (!kind || !params || !/^[a-z_]+\.[a-z_]+$/.test(kind)) return event.description;
  const base = `eventKinds.${kind}`;
  if (!exists(base)) return event.description;
  // A task event names the template it ran when the server knows it (`<kind>Of`).
  const key = typeof params.template === 'string' && exists(`${base}Of`) ? `${base}Of` : base;
  const values: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(params)) if (value !== null) values[name] = value;
  if (typeof values.status === 'string')
    values.status = TASK_STATUSES.has(values.status)
      ? t(`status.${values.status}`)
      : t('status.unknown', { status: values.status });
  for (const param of ['role', 'from'])
    if (typeof values[param] === 'string' && ROLES.has(values[param]))
      values[param] = t(`roles.${values[param]}`);
  const text = t(key, values);
  // A placeholder left unfilled (a param the event lacks): the description says it whole.
  return text.includes('{{') ? event.description : text;
}
