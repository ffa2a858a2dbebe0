import type { Kysely } from 'kysely';

/**
 * A task may run with another of its project's environments than its template's: `task.environment_id` (null: the
 * template's). Kept only when the template allows it (`task_params.allow_override_environment`).
 */
export function taskEnvironmentOverride() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('task').addColumn('environment_id', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('task').dropColumn('environment_id').execute();
    },
  };
}
