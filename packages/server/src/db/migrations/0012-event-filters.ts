import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect';

const indexes = {
  event_user_idx: ['user_id', 'id'],
  event_object_type_idx: ['object_type', 'id'],
  event_created_idx: ['created', 'id'],
} as const;

/**
 * Indexes for the activity log's filters, so a page of a large log is read from an index whatever the filter:
 * by acting user and by object type (each with the id, which every page is ordered and cursored by), and by time
 * (the `from`/`to` range). The project filter has `event_project_idx` (project_id, id) since the first schema.
 */
export function eventFilters(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      for (const [name, columns] of Object.entries(indexes))
        await db.schema
          .createIndex(name)
          .on('event')
          .columns([...columns])
          .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const name of Object.keys(indexes)) {
        const drop = db.schema.dropIndex(name);
        // Only MySQL names the table of the index it drops.
        await (dialect === 'mysql' ? drop.on('event') : drop).execute();
      }
    },
  };
}
