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
