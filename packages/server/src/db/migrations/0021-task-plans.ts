import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Task plans: the readable summary of a Terraform/OpenTofu saved plan (`show -json`), one row per task that
 * planned (`summary`: a JSON object as text, names and counts only, never values).
 */
export function taskPlans(dialect: Dialect) {
  const text = dialect === 'mysql' ? sql`mediumtext` : sql`text`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('task_plan')
        .addColumn('task_id', 'integer', (c) => c.primaryKey())
        .addColumn('project_id', 'integer', (c) => c.notNull())
        .addColumn('summary', text, (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('task_plan').execute();
    },
  };
}
