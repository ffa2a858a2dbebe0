import type { EventView } from '@signalbox/contracts';
import type { Db } from '../../db';

function baseQuery(db: Db) {
  return db
    .selectFrom('event')
    .leftJoin('user', 'user.id', 'event.user_id')
    .leftJoin('project', 'project.id', 'event.project_id')
    .select([
      'event.id',
      'event.project_id',
      'event.user_id',
      'event.object_id',
      'event.object_type',
      'event.description',
      'event.created',
      'user.username as username',
      'user.name as user_name',
      'project.name as project_name',
    ])
    .orderBy('event.id', 'desc');
}

export function listProjectEvents(db: Db, projectId: number, limit: number): Promise<EventView[]> {
  return baseQuery(db).where('event.project_id', '=', projectId).limit(limit).execute();
}

/** Events of every project the user belongs to (admins: all). */
export function listUserEvents(
  db: Db,
  userId: number,
  isAdmin: boolean,
  limit: number,
): Promise<EventView[]> {
  let q = baseQuery(db);
  if (!isAdmin) {
    q = q.where((eb) =>
      eb(
        'event.project_id',
        'in',
        eb
          .selectFrom('project_user')
          .select('project_user.project_id')
          .where('project_user.user_id', '=', userId),
      ),
    );
  }
  return q.limit(limit).execute();
}
