import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * A revision on each template and task row, counted up by the database on every update of the row — whoever writes
 * it (the server, a restore, an admin's SQL) — so a reader that kept what it made of a row can tell by one narrow
 * read whether the row changed since. A template's revision leaves out the updates of the task triggers (its
 * `task_count` and `last_task_id`, kept by the database as tasks come and go): those are read beside it.
 */
export function rowRevisions(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      for (const table of ['template', 'task'])
        await db.schema
          .alterTable(table)
          .addColumn('rev', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
      if (dialect === 'sqlite') {
        // The trigger's own update changes `rev`, which its condition leaves out: it never fires itself again.
        await sql`CREATE TRIGGER template_revised AFTER UPDATE ON template
          WHEN NEW.rev = OLD.rev AND NEW.task_count = OLD.task_count AND NEW.last_task_id IS OLD.last_task_id
          BEGIN UPDATE template SET rev = OLD.rev + 1 WHERE id = NEW.id; END`.execute(db);
        await sql`CREATE TRIGGER task_revised AFTER UPDATE ON task WHEN NEW.rev = OLD.rev
          BEGIN UPDATE task SET rev = OLD.rev + 1 WHERE id = NEW.id; END`.execute(db);
      } else if (dialect === 'postgres') {
        await sql`CREATE FUNCTION template_revised() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.task_count = OLD.task_count AND NEW.last_task_id IS NOT DISTINCT FROM OLD.last_task_id THEN
            NEW.rev := OLD.rev + 1;
          END IF;
          RETURN NEW;
        END $$`.execute(db);
        await sql`CREATE TRIGGER template_revised BEFORE UPDATE ON template
          FOR EACH ROW EXECUTE FUNCTION template_revised()`.execute(db);
        await sql`CREATE FUNCTION task_revised() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          NEW.rev := OLD.rev + 1;
          RETURN NEW;
        END $$`.execute(db);
        await sql`CREATE TRIGGER task_revised BEFORE UPDATE ON task
          FOR EACH ROW EXECUTE FUNCTION task_revised()`.execute(db);
      } else {
        await sql`CREATE TRIGGER template_revised BEFORE UPDATE ON template FOR EACH ROW
          SET NEW.rev = IF(NEW.task_count <=> OLD.task_count AND NEW.last_task_id <=> OLD.last_task_id,
            OLD.rev + 1, NEW.rev)`.execute(db);
        await sql`CREATE TRIGGER task_revised BEFORE UPDATE ON task FOR EACH ROW
          SET NEW.rev = OLD.rev + 1`.execute(db);
      }
    },
    async down(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`DROP TRIGGER template_revised ON template`.execute(db);
        await sql`DROP FUNCTION template_revised()`.execute(db);
        await sql`DROP TRIGGER task_revised ON task`.execute(db);
        await sql`DROP FUNCTION task_revised()`.execute(db);
      } else {
        await sql`DROP TRIGGER template_revised`.execute(db);
        await sql`DROP TRIGGER task_revised`.execute(db);
      }
      for (const table of ['template', 'task']) await db.schema.alterTable(table).dropColumn('rev').execute();
    },
  };
}
