import type { Db } from '../db';
import { now } from '../db/values';

export type EventInput = {
  project_id: number | null;
  user_id: number | null;
  object_type: string;
  object_id: number | null;
  description: string;
};

/** Writes one audit event. Every create/update/delete calls this after its change is stored. */
export async function recordEvent(db: Db, event: EventInput) {
  await db
    .insertInto('event')
    .values({ ...event, description: event.description.slice(0, 1000), created: now() })
    .execute();
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
