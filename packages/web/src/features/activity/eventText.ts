import type { EventView } from '@signalbox/contracts';
import type { TFunction } from 'i18next';

/** Task statuses with a label of their own (status.* in the catalogue). */
const TASK_STATUSES = new Set([
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
  if (!kind || !params || !/^[a-z]+\.[a-z]+$/.test(kind)) return event.description;
  const key = `eventKinds.${kind}`;
  if (!exists(key)) return event.description;
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
