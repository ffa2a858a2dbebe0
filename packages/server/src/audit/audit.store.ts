import type { Db } from '../db';
import { insertReturningId, now } from '../db/values';
import { forwarderOf } from './forward';

export type EventInput = {
  project_id: number | null;
  user_id: number | null;
  object_type: string;
  object_id: number | null;
  description: string;
};

/**
 * Writes one audit event: the one place events are stored. Every create/update/delete calls this after its change
 * is stored. With audit forwarding configured (audit/forward.ts), the stored event is also handed to the
 * forwarder, which sends it in the background.
 */
export async function recordEvent(db: Db, event: EventInput) {
  const values = { ...event, description: event.description.slice(0, 1000), created: now() };
  const forwarder = forwarderOf(db);
  if (!forwarder) {
    await db.insertInto('event').values(values).execute();
    return;
  }
  const id = await insertReturningId(db, forwarder.dialect, 'event', values);
  forwarder.enqueue({ id, ...values });
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
) {
  return recordEvent(db, {
    project_id: projectId,
    user_id: user.id,
    object_type: objectType,
    object_id: objectId,
    description,
  });
}
