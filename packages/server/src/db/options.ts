import { randomBytes } from 'node:crypto';
import { type SecretBox, SecretKeyRotationUnfinishedError, secretKeyFingerprint } from '../lib/crypto';
import type { Db } from './index';

export { secretKeyFingerprint };

/** The option row holding the fingerprint of the key the database's secrets are sealed with. */
export const SECRET_KEY_OPTION = 'secret_key_fingerprint';

/**
 * The option row a secret-key rotation holds while it runs: the fingerprint of the new key. Some secrets may be
 * sealed under it already, so no server starts until the rotation is finished.
 */
export const SECRET_KEY_ROTATION_OPTION = 'secret_key_rotation';

/** Thrown at start when this server's secret key cannot open the database's secrets; the server must not start. */
export class SecretKeyMismatchError extends Error {
  constructor() {
    super(
      "this server's secret key is not the one the database's secrets are sealed with. Every server on one " +
        'database needs the same key: set SIGNALBOX_SECRET_KEY on each to the key of the first (the ' +
        'secret.key file in its data directory, unless SIGNALBOX_SECRET_KEY was set there).',
    );
    this.name = 'SecretKeyMismatchError';
  }
}

/** True when the box opens this sealed value. */
function opens(box: SecretBox, sealed: string) {
  try {
    box.open(sealed);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure this server's key is the database's: the first server records its key's fingerprint, later ones
 * must match it. A database from before fingerprints gets one only if the key opens a secret already stored
 * (a stored secret sealed under another key refuses the start instead). Two servers racing to record different
 * keys: the insert of one fails on the primary key, and it compares with the winner's. An unfinished key rotation
 * refuses the start.
 */
export async function checkSecretKey(db: Db, key: Buffer, box: SecretBox): Promise<void> {
  const fingerprint = secretKeyFingerprint(key);
  const rotating = await db
    .selectFrom('option')
    .select('value')
    .where('key', '=', SECRET_KEY_ROTATION_OPTION)
    .executeTakeFirst();
  if (rotating) throw new SecretKeyRotationUnfinishedError();
  const recorded = await db
    .selectFrom('option')
    .select('value')
    .where('key', '=', SECRET_KEY_OPTION)
    .executeTakeFirst();
  if (recorded) {
    if (recorded.value !== fingerprint) throw new SecretKeyMismatchError();
    return;
  }
  const sealed = await db
    .selectFrom('access_key')
    .select('secret')
    .where('secret', 'is not', null)
    .where('secret', '!=', '')
    .limit(1)
    .executeTakeFirst();
  if (sealed?.secret && !opens(box, sealed.secret)) throw new SecretKeyMismatchError();
  if ((await recordOption(db, SECRET_KEY_OPTION, fingerprint)) !== fingerprint)
    throw new SecretKeyMismatchError();
}

/**
 * The value of an option row, recording `value` first when there is none. Servers racing to record different
 * values all get the one that was stored: the others' inserts fail on the primary key and they read it.
 */
export async function recordOption(db: Db, key: string, value: string): Promise<string> {
  const read = async () =>
    (await db.selectFrom('option').select('value').where('key', '=', key).executeTakeFirst())?.value;
  const before = await read();
  if (before !== undefined) return before;
  try {
    await db.insertInto('option').values({ key, value }).execute();
    return value;
  } catch (err) {
    const winner = await read();
    if (winner === undefined) throw err;
    return winner;
  }
}

/** The option naming this deployment: one random id shared by every server of the database. */
const DEPLOYMENT_OPTION = 'deployment_id';

/**
 * The id of the deployment this database belongs to, made at its first server's start. Two deployments sharing
 * one Redis keep their live events apart by it.
 */
export const deploymentId = (db: Db) => recordOption(db, DEPLOYMENT_OPTION, randomBytes(8).toString('hex'));
