import { type Kysely, sql } from 'kysely';

/**
 * Runs started by AI agents wait for a person: `project.agent_runs_need_approval` (1 by default, existing projects
 * included) holds a task started through the MCP endpoint in `waiting_approval` until a member approves it.
 * `task.source` says how a task was started (ui, api, schedule, integration, autorun, mcp; null on older rows), and
 * `task.source_token` the id of the API token that started it (null: none), which may not approve its own run.
 */
export function agentApproval() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('project')
        .addColumn('agent_runs_need_approval', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema.alterTable('task').addColumn('source', sql`varchar(20)`).execute();
      await db.schema.alterTable('task').addColumn('source_token', sql`varchar(32)`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('task').dropColumn('source_token').execute();
      await db.schema.alterTable('task').dropColumn('source').execute();
      await db.schema.alterTable('project').dropColumn('agent_runs_need_approval').execute();
    },
  };
}
