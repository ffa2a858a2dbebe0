import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * What the templates list shows of each template's tasks, kept on the template row: `task_count` (how many tasks it
 * has) and `last_task_id` (its newest task; null: none). The database keeps them itself, with triggers on `task`,
 * in the transaction that inserts or deletes the task — whoever writes the row (the server, a restore, an admin's
 * SQL) — so the list reads one row per template instead of counting each template's tasks.
 */
export function templateTaskCounters(dialect: Dialect) {
  const newest = sql`(SELECT MAX(t.id) FROM task t WHERE t.template_id = template.id)`;
  const count = sql`(SELECT COUNT(*) FROM task t WHERE t.template_id = template.id)`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('template')
        .addColumn('task_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('template').addColumn('last_task_id', 'integer').execute();
      await sql`UPDATE template SET task_count = ${count}, last_task_id = ${newest}`.execute(db);
      if (dialect === 'sqlite') {
        await sql`CREATE TRIGGER task_counted_on_insert AFTER INSERT ON task BEGIN
          UPDATE template SET task_count = task_count + 1,
            last_task_id = CASE WHEN last_task_id IS NULL OR last_task_id < NEW.id THEN NEW.id ELSE last_task_id END
          WHERE id = NEW.template_id;
        END`.execute(db);
        await sql`CREATE TRIGGER task_counted_on_delete AFTER DELETE ON task BEGIN
          UPDATE template SET task_count = task_count - 1,
            last_task_id = CASE WHEN last_task_id = OLD.id
              THEN (SELECT MAX(t.id) FROM task t WHERE t.template_id = OLD.template_id) ELSE last_task_id END
          WHERE id = OLD.template_id;
        END`.execute(db);
      } else if (dialect === 'postgres') {
        await sql`CREATE FUNCTION task_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'INSERT' THEN
            UPDATE template SET task_count = task_count + 1,
              last_task_id = GREATEST(COALESCE(last_task_id, NEW.id), NEW.id)
            WHERE id = NEW.template_id;
            RETURN NEW;
          END IF;
          UPDATE template SET task_count = task_count - 1,
            last_task_id = CASE WHEN last_task_id = OLD.id
              THEN (SELECT MAX(t.id) FROM task t WHERE t.template_id = OLD.template_id) ELSE last_task_id END
          WHERE id = OLD.template_id;
          RETURN OLD;
        END $$`.execute(db);
        await sql`CREATE TRIGGER task_counted AFTER INSERT OR DELETE ON task
          FOR EACH ROW EXECUTE FUNCTION task_counted()`.execute(db);
      } else {
        await sql`CREATE TRIGGER task_counted_on_insert AFTER INSERT ON task FOR EACH ROW
          UPDATE template SET task_count = task_count + 1,
            last_task_id = GREATEST(COALESCE(last_task_id, NEW.id), NEW.id)
          WHERE id = NEW.template_id`.execute(db);
        await sql`CREATE TRIGGER task_counted_on_delete AFTER DELETE ON task FOR EACH ROW
          UPDATE template SET task_count = task_count - 1,
            last_task_id = CASE WHEN last_task_id = OLD.id
              THEN (SELECT MAX(t.id) FROM task t WHERE t.template_id = OLD.template_id) ELSE last_task_id END
          WHERE id = OLD.template_id`.execute(db);
      }
    },
    async down(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`DROP TRIGGER task_counted ON task`.execute(db);
        await sql`DROP FUNCTION task_counted()`.execute(db);
      } else {
        await sql`DROP TRIGGER task_counted_on_insert`.execute(db);
        await sql`DROP TRIGGER task_counted_on_delete`.execute(db);
      }
      await db.schema.alterTable('template').dropColumn('last_task_id').execute();
      await db.schema.alterTable('template').dropColumn('task_count').execute();
    },
  };
}
