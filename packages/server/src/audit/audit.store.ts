import type { Db } from '../db';
import { afterCommit } from '../db/transaction';
import { insertReturningId, now } from '../db/values';
import { forwarderOf } from './forward';

/**
 * What an event says as data: a code the console words in the reader's language, and its values (see
 * packages/web/src/features/activity/eventText.ts for the kinds it knows).
 */
export type EventKind = { kind: string; params: Record<string, string | number | null> };

export type EventInput = {
  project_id: number | null;
  user_id: number | null;
  object_type: string;
  object_id: number | null;
  /** The English text, kept for the API (Semaphore's clients read it), exports and forwarding. */
  description: string;
} & Partial<EventKind>;

/** `<object type>.<action>` of a named object, e.g. namedKind('template', 'created', 'Deploy'). */
export const namedKind = (objectType: string, action: string, name: string): EventKind => ({
  kind: `${objectType}.${action}`,
  params: { name },
});

/**
 * Writes one audit event: the one place events are stored. Every create/update/delete calls this after its change
 * is stored, in the same transaction as the change where it writes several rows. With audit forwarding configured (audit/forward.ts), the stored event is also handed to the
 * forwarder, which sends it in the background.
 */
export async function recordEvent(db: Db, event: EventInput) {
  const { kind, params, ...rest } = event;
  const values = {
    ...rest,
    description: event.description.slice(0, 1000),
    kind: kind ?? null,
    params: kind && params ? JSON.stringify(params) : null,
    created: now(),
  };
  const forwarder = forwarderOf(db);
  if (!forwarder) {
    await db.insertInto('event').values(values).execute();
    return;
  }
  const id = await insertReturningId(db, forwarder.dialect, 'event', values);
  // Written in a transaction, the event is forwarded once it is committed, and never when it rolls back.
  afterCommit(db, () =>
    forwarder.enqueue({ id, ...values, params: values.params === null ? null : (params ?? null) }),
  );
}

/** What was done to a named object: its event reads `<label> <name> <action>` and is of kind `<type>.<action>`. */
export type NamedChange = {
  type: string;
  /** How the English description names the kind of object, e.g. `Access key`. */
  label: string;
  id: number | null;
  name: string;
  action: 'created' | 'updated' | 'deleted';
};

/**
 * Records that a user created, changed or deleted a named object of a project, e.g. `recordNamedEvent(trx, user, 3,
 * { type: 'key', label: 'Access key', id: 7, name: 'deploy', action: 'created' })` for "Access key deploy created".
 */
export function recordNamedEvent(db: Db, user: { id: number }, projectId: number, change: NamedChange) {
  return recordProjectEvent(
    db,
    user,
    projectId,
    change.type,
    change.id,
    `${change.label} ${change.name} ${change.action}`,
    namedKind(change.type, change.action, change.name),
  );
}

/**
 * Records what a user did to one object of a project, e.g. `recordProjectEvent(db, user, 3, 'repository', 7,
 * 'Repository web created')`.
 */
export function recordProjectEvent(
  db: Db,
  user: { id: number },
  projectId: number,
  objectType: string,
  objectId: number | null,
  description: string,
  kind?: EventKind,
) {
  return recordEvent(db, {
    project_id: projectId,
    user_id: user.id,
    object_type: objectType,
    object_id: objectId,
    description,
    ...kind,
  });
}
