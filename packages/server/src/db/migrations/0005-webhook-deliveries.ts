import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect';

/**
 * Delivery ids an integration has accepted (`X-GitHub-Delivery`, `X-Gitlab-Event-UUID`, …), so a redelivered
 * webhook starts nothing. The unique key makes the first of two concurrent deliveries the only one that
 * inserts; rows older than a day are pruned by the receiver. On MySQL the id compares byte for byte (its
 * default collation would treat `ABC` and `abc` as the same delivery).
 */
export function webhookDeliveries(dialect: Dialect) {
  const deliveryId =
    dialect === 'mysql' ? sql`varchar(255) character set ascii collate ascii_bin` : sql`varchar(255)`;
  const time = sql`varchar(40)`;
  return {
    async up(db: Kysely<unknown>) {
      const table =
        dialect === 'postgres'
          ? db.schema.createTable('integration_delivery').addColumn('id', 'serial', (c) => c.primaryKey())
          : db.schema
              .createTable('integration_delivery')
              .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
      await table
        .addColumn('integration_id', 'integer', (c) => c.notNull())
        .addColumn('delivery_id', deliveryId, (c) => c.notNull())
        .addColumn('created', time, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('integration_delivery_uq')
        .unique()
        .on('integration_delivery')
        .columns(['integration_id', 'delivery_id'])
        .execute();
      await db.schema
        .createIndex('integration_delivery_created_idx')
        .on('integration_delivery')
        .column('created')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('integration_delivery').execute();
    },
  };
}
