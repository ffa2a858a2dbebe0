import type { Db } from '../../db';
import { deleteRows } from '../../db/rows';
import { isUniqueViolation, toCount } from '../../db/values';

// Accepted delivery ids (redelivery de-duplication).

/** Rows older than the window removed per accepted delivery, so pruning never grows into one long statement. */
const PRUNE_BATCH = 100;

/**
 * Records that the integration accepted a delivery id; false when it already did after `since`. The insert
 * comes first and the unique key decides, so of two concurrent deliveries of one id only one gets true. A row
 * from before `since` is taken over by a conditional update (again only one caller wins it).
 */
export async function claimDelivery(
  db: Db,
  integrationId: number,
  deliveryId: string,
  at: string,
  since: string,
): Promise<boolean> {
  let claimed = true;
  try {
    await db
      .insertInto('integration_delivery')
      .values({ integration_id: integrationId, delivery_id: deliveryId, created: at })
      .execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const res = await db
      .updateTable('integration_delivery')
      .set({ created: at })
      .where('integration_id', '=', integrationId)
      .where('delivery_id', '=', deliveryId)
      .where('created', '<', since)
      .executeTakeFirst();
    claimed = toCount(res.numUpdatedRows) === 1;
  }
  if (claimed) await pruneDeliveries(db, since);
  return claimed;
}

/** Forgets an accepted delivery id (its task could not be started, so a redelivery should try again). */
export function releaseDelivery(db: Db, integrationId: number, deliveryId: string, at: string) {
  return deleteRows(db, 'integration_delivery', {
    integration_id: integrationId,
    delivery_id: deliveryId,
    created: at,
  });
}

/** Deletes up to one batch of delivery ids accepted before `since` (of any integration). */
export async function pruneDeliveries(db: Db, since: string, limit = PRUNE_BATCH) {
  const old = await db
    .selectFrom('integration_delivery')
    .select('id')
    .where('created', '<', since)
    .orderBy('created')
    .limit(limit)
    .execute();
  if (old.length === 0) return;
  await db
    .deleteFrom('integration_delivery')
    .where(
      'id',
      'in',
      old.map((r) => r.id),
    )
    .execute();
}

/**
 * The row that serialises an integration's "is an identical task waiting? then start one" across instances: a
 * delivery id no sender can send (delivery ids are printable ASCII without spaces, or a `sha256:` digest).
 */
const DEBOUNCE_LOCK = 'debounce lock';

/**
 * Takes the integration's debounce lock, unless another caller holds it since `staleBefore` or later (a holder
 * older than that died holding it and loses it). Only one caller gets true. Never prunes: the delivery window is
 * far longer than a lock's.
 */
export async function takeDebounceLock(db: Db, integrationId: number, at: string, staleBefore: string) {
  try {
    await db
      .insertInto('integration_delivery')
      .values({ integration_id: integrationId, delivery_id: DEBOUNCE_LOCK, created: at })
      .execute();
    return true;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const res = await db
      .updateTable('integration_delivery')
      .set({ created: at })
      .where('integration_id', '=', integrationId)
      .where('delivery_id', '=', DEBOUNCE_LOCK)
      .where('created', '<', staleBefore)
      .executeTakeFirst();
    return toCount(res.numUpdatedRows) === 1;
  }
}

/** Gives the debounce lock taken at `at` back. */
export function releaseDebounceLock(db: Db, integrationId: number, at: string) {
  return releaseDelivery(db, integrationId, DEBOUNCE_LOCK, at);
}
