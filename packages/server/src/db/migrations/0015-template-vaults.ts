import { type Kysely, sql } from 'kysely';

/**
 * A template's vault (one per template) keeps its name and may be a password script: `vault_name` is the vault id
 * Ansible is given (`--vault-id <name>@…`; null reads as `default`), `vault_script` the script that prints the vault
 * password (a path in the repository, or an absolute path on the machine that runs the task), null for a vault
 * whose password is the key `vault_key_id`.
 */
export function templateVaults() {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('template').addColumn('vault_name', sql`varchar(100)`).execute();
      await db.schema.alterTable('template').addColumn('vault_script', sql`varchar(255)`).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('template').dropColumn('vault_script').execute();
      await db.schema.alterTable('template').dropColumn('vault_name').execute();
    },
  };
}
