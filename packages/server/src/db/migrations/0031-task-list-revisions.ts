import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * A revision of what task lists show, counted up by the database — whoever writes — so that a list kept since the
 * last read can be told unchanged by one narrow read instead of a read of its page:
 * - `scope` = a project's id: one of its tasks was added, changed (any column: its own revision moved) or removed;
 * - `scope` = 0 (`NAMES_SCOPE`): a user or a remote runner was renamed or removed (lists name a task's starter and
 *   runner; neither belongs to one project).
 * A scope with no change yet has no row (read as none: the same for every read until the first change). No key to
 * `project`, as with the templates' revision: a project deleted leaves its number under an id never given again.
 * PostgreSQL counts once per statement and project, in the projects' order (a statement changing the tasks of
 * several projects locks their rows in the same order as any other); the others once per row.
 */
export function taskListRevisions(dialect: Dialect) {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('task_list_rev')
        .addColumn('scope', 'integer', (c) => c.primaryKey())
        .addColumn('rev', 'integer', (c) => c.notNull())
        .execute();
      if (dialect === 'sqlite') {
        const bump = (scope: string) =>
          sql.raw(
            `INSERT INTO task_list_rev (scope, rev) VALUES (${scope}, 1)
            ON CONFLICT (scope) DO UPDATE SET rev = rev + 1;`,
          );
        await sql`CREATE TRIGGER task_listed_added AFTER INSERT ON task
          BEGIN ${bump('NEW.project_id')} END`.execute(db);
        await sql`CREATE TRIGGER task_listed_removed AFTER DELETE ON task
          BEGIN ${bump('OLD.project_id')} END`.execute(db);
        // An update moves the row's revision in a trigger of its own (the update within it is the one counted
        // here, once per change).
        await sql`CREATE TRIGGER task_listed_changed AFTER UPDATE OF rev ON task WHEN NEW.rev <> OLD.rev
          BEGIN ${bump('NEW.project_id')} END`.execute(db);
        for (const table of ['user', 'remote_runner']) {
          await sql`CREATE TRIGGER ${sql.raw(`${table}_listed_renamed`)} AFTER UPDATE OF name ON ${sql.table(table)}
            WHEN NEW.name IS NOT OLD.name BEGIN ${bump('0')} END`.execute(db);
          await sql`CREATE TRIGGER ${sql.raw(`${table}_listed_removed`)} AFTER DELETE ON ${sql.table(table)}
            BEGIN ${bump('0')} END`.execute(db);
        }
      } else if (dialect === 'postgres') {
        await sql`CREATE FUNCTION task_list_revised() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO task_list_rev (scope, rev)
            SELECT DISTINCT project_id, 1 FROM changed ORDER BY project_id
            ON CONFLICT (scope) DO UPDATE SET rev = task_list_rev.rev + 1;
          RETURN NULL;
        END $$`.execute(db);
        for (const [event, table] of [
          ['INSERT', 'NEW'],
          ['UPDATE', 'NEW'],
          ['DELETE', 'OLD'],
        ] as const)
          await sql`CREATE TRIGGER ${sql.raw(`task_listed_${event.toLowerCase()}`)} AFTER ${sql.raw(event)} ON task
            REFERENCING ${sql.raw(table)} TABLE AS changed
            FOR EACH STATEMENT EXECUTE FUNCTION task_list_revised()`.execute(db);
        await sql`CREATE FUNCTION task_list_names_revised() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'UPDATE' AND NEW.name IS NOT DISTINCT FROM OLD.name THEN
            RETURN NULL;
          END IF;
          INSERT INTO task_list_rev (scope, rev) VALUES (0, 1)
            ON CONFLICT (scope) DO UPDATE SET rev = task_list_rev.rev + 1;
          RETURN NULL;
        END $$`.execute(db);
        for (const table of ['user', 'remote_runner'])
          await sql`CREATE TRIGGER ${sql.raw(`${table}_listed_names`)} AFTER UPDATE OR DELETE ON ${sql.table(table)}
            FOR EACH ROW EXECUTE FUNCTION task_list_names_revised()`.execute(db);
      } else {
        const bump = (scope: string) =>
          sql.raw(
            `INSERT INTO task_list_rev (scope, rev) VALUES (${scope}, 1)
            ON DUPLICATE KEY UPDATE rev = rev + 1`,
          );
        await sql`CREATE TRIGGER task_listed_added AFTER INSERT ON task FOR EACH ROW
          ${bump('NEW.project_id')}`.execute(db);
        await sql`CREATE TRIGGER task_listed_removed AFTER DELETE ON task FOR EACH ROW
          ${bump('OLD.project_id')}`.execute(db);
        await sql`CREATE TRIGGER task_listed_changed AFTER UPDATE ON task FOR EACH ROW
          ${bump('NEW.project_id')}`.execute(db);
        for (const table of ['user', 'remote_runner']) {
          await sql`CREATE TRIGGER ${sql.raw(`${table}_listed_renamed`)} AFTER UPDATE ON ${sql.table(table)}
            FOR EACH ROW IF NOT (NEW.name <=> OLD.name) THEN ${bump('0')}; END IF`.execute(db);
          await sql`CREATE TRIGGER ${sql.raw(`${table}_listed_removed`)} AFTER DELETE ON ${sql.table(table)}
            FOR EACH ROW ${bump('0')}`.execute(db);
        }
      }
    },
    async down(db: Kysely<unknown>) {
      if (dialect === 'postgres') {
        for (const event of ['insert', 'update', 'delete'])
          await sql`DROP TRIGGER ${sql.raw(`task_listed_${event}`)} ON task`.execute(db);
        for (const table of ['user', 'remote_runner'])
          await sql`DROP TRIGGER ${sql.raw(`${table}_listed_names`)} ON ${sql.table(table)}`.execute(db);
        await sql`DROP FUNCTION task_list_revised()`.execute(db);
        await sql`DROP FUNCTION task_list_names_revised()`.execute(db);
      } else {
        for (const name of [
          'task_listed_added',
          'task_listed_removed',
          'task_listed_changed',
          'user_listed_renamed',
          'user_listed_removed',
          'remote_runner_listed_renamed',
          'remote_runner_listed_removed',
        ])
          await sql`DROP TRIGGER ${sql.raw(name)}`.execute(db);
      }
      await db.schema.dropTable('task_list_rev').execute();
    },
  };
}
