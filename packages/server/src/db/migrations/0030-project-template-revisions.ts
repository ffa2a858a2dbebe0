import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * A revision of each project's templates, counted up by the database whenever one of them is added, removed or
 * revised (its `rev` moves: not for its task counters) — whoever writes it. A task list checks what it kept of each
 * task's template by this one row instead of by a lookup of every task's template. A project whose templates never
 * changed since has no row (read as none: the same for every read until the first change). No key to `project`:
 * deleting a project deletes its templates, whose triggers count on its row, which then stays (a number under an id
 * never given again).
 */
export function projectTemplateRevisions(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('project_template_rev')
        .addColumn('project_id', 'integer', (c) => c.primaryKey())
        .addColumn('rev', 'integer', (c) => c.notNull())
        .execute();
      if (dialect === 'sqlite') {
        const bump = (project: string) =>
          sql.raw(
            `INSERT INTO project_template_rev (project_id, rev) VALUES (${project}, 1)
            ON CONFLICT (project_id) DO UPDATE SET rev = rev + 1;`,
          );
        await sql`CREATE TRIGGER template_added AFTER INSERT ON template
          BEGIN ${bump('NEW.project_id')} END`.execute(db);
        await sql`CREATE TRIGGER template_removed AFTER DELETE ON template
          BEGIN ${bump('OLD.project_id')} END`.execute(db);
        await sql`CREATE TRIGGER template_changed AFTER UPDATE OF rev ON template WHEN NEW.rev <> OLD.rev
          BEGIN ${bump('NEW.project_id')} END`.execute(db);
      } else if (dialect === 'postgres') {
        await sql`CREATE FUNCTION project_templates_revised() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          project integer;
        BEGIN
          IF TG_OP = 'UPDATE' AND NEW.rev = OLD.rev THEN
            RETURN NULL;
          END IF;
          project := CASE WHEN TG_OP = 'DELETE' THEN OLD.project_id ELSE NEW.project_id END;
          INSERT INTO project_template_rev (project_id, rev) VALUES (project, 1)
            ON CONFLICT (project_id) DO UPDATE SET rev = project_template_rev.rev + 1;
          RETURN NULL;
        END $$`.execute(db);
        await sql`CREATE TRIGGER project_templates_revised AFTER INSERT OR UPDATE OR DELETE ON template
          FOR EACH ROW EXECUTE FUNCTION project_templates_revised()`.execute(db);
      } else {
        const bump = (project: string) =>
          sql.raw(
            `INSERT INTO project_template_rev (project_id, rev) VALUES (${project}, 1)
            ON DUPLICATE KEY UPDATE rev = rev + 1`,
          );
        await sql`CREATE TRIGGER template_added AFTER INSERT ON template FOR EACH ROW
          ${bump('NEW.project_id')}`.execute(db);
        await sql`CREATE TRIGGER template_removed AFTER DELETE ON template FOR EACH ROW
          ${bump('OLD.project_id')}`.execute(db);
        await sql`CREATE TRIGGER template_changed AFTER UPDATE ON template FOR EACH ROW
          IF NEW.rev <> OLD.rev THEN ${bump('NEW.project_id')}; END IF`.execute(db);
      }
    },
    async down(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        await sql`DROP TRIGGER project_templates_revised ON template`.execute(db);
        await sql`DROP FUNCTION project_templates_revised()`.execute(db);
      } else {
        for (const name of ['template_added', 'template_removed', 'template_changed'])
          await sql`DROP TRIGGER ${sql.raw(name)}`.execute(db);
      }
      await db.schema.dropTable('project_template_rev').execute();
    },
  };
}
