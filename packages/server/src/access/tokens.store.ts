import { type ApiToken, type TokenScope, tokenScopes } from '@signalbox/contracts';
import type { Db } from '../db';
import { now, toBool } from '../db/values';
import { randomToken, sha256 } from '../lib/crypto';
import { readProjectIds, readScopes, storedScopes, type TokenLimits } from './token-limits';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * API tokens are stored as SHA-256 hashes; the token itself is shown once, at creation. A token given
 * `expiresInDays` stops working that many days from now. Like the peer's, a token is 32 random bytes in
 * lower-case URL-safe base64, so clients that lower-case it keep it intact. Each token also has a short
 * random id that is not secret: the list shows it and deleting accepts it. `limits` narrows what the token may do
 * (its scopes, every one = none given) and where (its projects); without them it has its owner's full rights.
 */
export async function createToken(
  db: Db,
  userId: number,
  name: string,
  expiresInDays?: number | null,
  limits: { scopes?: readonly TokenScope[] | null; projectIds?: readonly number[] | null } = {},
) {
  const token = randomToken(32).toLowerCase();
  const id = randomToken(12);
  const created = new Date();
  const expires = expiresInDays ? new Date(created.getTime() + expiresInDays * DAY_MS).toISOString() : null;
  const projectIds = limits.projectIds ? [...new Set(limits.projectIds)].sort((a, b) => a - b) : null;
  const row = {
    id,
    token_hash: sha256(token),
    name,
    user_id: userId,
    created: created.toISOString(),
    expires,
    expired: 0,
    scopes: storedScopes(limits.scopes),
    project_ids: projectIds ? JSON.stringify(projectIds) : null,
  };
  await db.insertInto('api_token').values(row).execute();
  return { token, info: toToken(row) };
}

/** A token as the API lists it: `expired` once revoked or once its expiry time has passed (as at `at`). */
export function toToken(
  row: {
    id: string;
    name: string;
    created: string;
    expires: string | null;
    expired: number;
    user_id: number;
    scopes: string | null;
    project_ids: string | null;
  },
  at = now(),
): ApiToken {
  return {
    id: row.id,
    name: row.name,
    created: row.created,
    expires: row.expires,
    expired: toBool(row.expired) || (row.expires !== null && row.expires <= at),
    user_id: row.user_id,
    scopes: readScopes(row.scopes) ?? [...tokenScopes],
    project_ids: readProjectIds(row.project_ids),
  };
}

/** What a stored token may reach (see TokenLimits). */
export const limitsOf = (row: { scopes: string | null; project_ids: string | null }): TokenLimits => ({
  scopes: readScopes(row.scopes),
  projectIds: readProjectIds(row.project_ids),
});

/**
 * Lists the user's tokens, newest first. As in Semaphore, a token that no longer works stays listed with
 * `expired: true` (its owner sees it ran out, and deletes it to remove it from the list).
 */
export async function listTokens(db: Db, userId: number) {
  const rows = await db
    .selectFrom('api_token')
    .select(['id', 'name', 'created', 'expires', 'expired', 'user_id', 'scopes', 'project_ids'])
    .where('user_id', '=', userId)
    .orderBy('created', 'desc')
    .orderBy('id')
    .execute();
  const at = now();
  return rows.map((row) => toToken(row, at));
}

/**
 * Deletes the user's token named by its listed id or by the token itself (the peer's clients only know the
 * token); it stops working at once. Answers the deleted token's id, or undefined when the user has no such
 * token.
 */
export async function deleteToken(db: Db, userId: number, idOrToken: string) {
  const row = await db
    .selectFrom('api_token')
    .select('id')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('id', '=', idOrToken), eb('token_hash', '=', tokenDigest(idOrToken))]))
    .executeTakeFirst();
  if (!row) return undefined;
  const result = await db
    .deleteFrom('api_token')
    .where('id', '=', row.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0 ? row.id : undefined;
}

/** The live token a secret stands for (its id, user and expiry), or undefined. */
export function findTokenUser(db: Db, token: string) {
  return db
    .selectFrom('api_token')
    .select(['id', 'user_id', 'expires'])
    .where('token_hash', '=', sha256(token.trim()))
    .where('expired', '=', 0)
    .where((eb) => eb.or([eb('expires', 'is', null), eb('expires', '>', now())]))
    .executeTakeFirst();
}

/**
 * The user a live token stands for (by the digest of its secret, see tokenDigest), read with the token in one
 * query, with the token's expiry (ISO time or null); undefined for an unknown, revoked or expired token.
 */
export async function findTokenOwner(db: Db, digest: string) {
  const row = await db
    .selectFrom('api_token')
    .innerJoin('user', 'user.id', 'api_token.user_id')
    .selectAll('user')
    .select([
      'api_token.id as token_id',
      'api_token.name as token_name',
      'api_token.expires as token_expires',
      'api_token.scopes as token_scopes',
      'api_token.project_ids as token_project_ids',
    ])
    .where('api_token.token_hash', '=', digest)
    .where('api_token.expired', '=', 0)
    .where((eb) => eb.or([eb('api_token.expires', 'is', null), eb('api_token.expires', '>', now())]))
    .executeTakeFirst();
  if (!row) return undefined;
  const { token_id, token_name, token_expires, token_scopes, token_project_ids, ...user } = row;
  return {
    user,
    token: { id: token_id, name: token_name },
    expires: token_expires,
    limits: limitsOf({ scopes: token_scopes, project_ids: token_project_ids }),
  };
}

/**
 * The ids among `ids` that name no project the user can access (an administrator: any project), in the order given:
 * a token may only be limited to projects its owner reaches.
 */
export async function projectsOutOfReach(
  db: Db,
  user: { id: number; admin: number },
  ids: readonly number[],
) {
  let q = db
    .selectFrom('project')
    .select('project.id')
    .where('project.id', 'in', [...new Set(ids)]);
  if (!user.admin) {
    q = q
      .innerJoin('project_user', 'project_user.project_id', 'project.id')
      .where('project_user.user_id', '=', user.id);
  }
  const found = new Set((await q.execute()).map((row) => Number(row.id)));
  return ids.filter((id) => !found.has(id));
}

/** How a token's secret is stored and looked up. */
export const tokenDigest = (token: string) => sha256(token.trim());

/** The token with this id while it still works (not revoked, not past its expiry), or undefined. */
export function findLiveToken(db: Db, id: string) {
  return db
    .selectFrom('api_token')
    .select(['id', 'user_id', 'expires', 'scopes', 'project_ids'])
    .where('id', '=', id)
    .where('expired', '=', 0)
    .where((eb) => eb.or([eb('expires', 'is', null), eb('expires', '>', now())]))
    .executeTakeFirst();
}

/** Deletes every API token of the user (a password change that revokes them); how many there were. */
export async function deleteUserTokens(db: Db, userId: number): Promise<number> {
  const result = await db.deleteFrom('api_token').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}
