import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Option lists: named lists of options of a project (`options`: a JSON array of {name, value}), offered by a
 * survey's choice variables. Task outputs: the named values a task published (`task.outputs`, a JSON object as
 * text; null: none).
 */
export function optionListsAndTaskOutputs(dialect: Dialect) {
  const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  return {
    async up(db: Kysely<unknown>) {
      const table = db.schema.createTable('option_list');
      await (dialect === 'postgres'
        ? table.addColumn('id', 'serial', (c) => c.primaryKey())
        : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      )
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('name', sql`varchar(100)`, (c) => c.notNull())
        .addColumn('options', text, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('option_list_project_idx').on('option_list').column('project_id').execute();
      await db.schema.alterTable('task').addColumn('outputs', text).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('task').dropColumn('outputs').execute();
      await db.schema.dropTable('option_list').execute();
    },
  };
}
