import type { LoginInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import type { FastifyBaseLogger } from 'fastify';
import type { Updateable } from 'kysely';
import { findUserById, type UserRow } from '../../access/principals.store';
import { recordEvent } from '../../audit/audit.store';
import type { Config } from '../../config';
import type { UserTable } from '../../db/tables';
import type { Deps } from '../../deps';
import { AppError, forbidden, found } from '../../lib/errors';
import { findOtherUserByLogin, findUserByLogin, updateUserRow } from '../users';
import { createExternalUser } from './external-user';
import { checkDirectoryPassword, type DirectoryUser, normalizeGroup } from './ldap.directory';
import { applyGroupRoles, type GroupMapping, type GroupSource } from './oidc.groups';

type LdapDeps = Pick<Deps, 'config' | 'db' | 'dialect' | 'bus' | 'log'>;

const LDAP_GROUPS: GroupSource = {
  via: '(groups in the LDAP directory)',
  setting: 'SIGNALBOX_LDAP_PROJECT_ROLES',
  log: { source: 'ldap' },
};

/** The admin and project-role mappings of the settings, their groups compared as the directory's are. */
export function ldapGroupMapping(config: Pick<Config, 'ldapAdminGroups' | 'ldapProjectRoles'>): GroupMapping {
  return {
    admin_groups: (config.ldapAdminGroups ?? []).map(normalizeGroup),
    project_roles: (config.ldapProjectRoles ?? []).map((r) => ({ ...r, group: normalizeGroup(r.group) })),
  };
}

/**
 * LDAP sign-in for POST /api/auth/login. With LDAP on, a login that names no local password user (no user, or
 * an external one) is checked against the directory; local users keep signing in with their own password. The
 * signed-in user, created on the first sign-in and refreshed on later ones, with the group mappings applied; or
 * null when the directory does not know the login or the password is wrong, so that the route answers exactly
 * as for a wrong local password. A directory that cannot be reached is a 503.
 */
export async function ldapSignIn(
  deps: LdapDeps,
  input: Pick<LoginInput, 'auth' | 'password'>,
  local: UserRow | undefined,
  log: FastifyBaseLogger,
): Promise<UserRow | null> {
  if (!deps.config.ldapEnable || (local && local.external !== 1)) return null;
  const answer = await checkDirectoryPassword(deps.config, input.auth, input.password, log);
  if (answer === 'no-entry' || answer === 'refused') return null;
  const user = await userForDirectoryEntry(deps, answer, input.auth, log);
  return applyGroupRoles(deps, LDAP_GROUPS, ldapGroupMapping(deps.config), user, answer.groups);
}

/**
 * The external user of a directory entry: the existing external user with its username or e-mail (name and
 * e-mail brought up to date), or a new non-admin one without projects. A local password user with that username
 * or e-mail is refused, as OIDC refuses it: the directory must not open a password account by naming it.
 */
async function userForDirectoryEntry(
  deps: LdapDeps,
  entry: DirectoryUser,
  login: string,
  log: FastifyBaseLogger,
): Promise<UserRow> {
  const email = entry.email.slice(0, 255);
  if (!email.includes('@'))
    throw forbidden(coded('ldap_no_email', { attribute: deps.config.ldapMappingMail }));
  const username = (entry.username || login).trim().replace(/\s+/g, '_').slice(0, 255);
  const name = (entry.name || username).slice(0, 255);

  const existing = (await findUserByLogin(deps.db, username)) ?? (await findUserByLogin(deps.db, email));
  if (existing) return refreshUser(deps, existing, { name, email }, log);

  let userId: number;
  try {
    userId = await createExternalUser(deps, { username, name, email }, 'LDAP');
  } catch (err) {
    // A concurrent first sign-in of the same person created the user first.
    const raced =
      err instanceof AppError && err.statusCode === 409 && (await findUserByLogin(deps.db, username));
    if (raced) return refreshUser(deps, raced, { name, email }, log);
    throw err;
  }
  return found(await findUserById(deps.db, userId), 'user');
}

/** Brings an external user's name and e-mail up to date with the directory; an e-mail another user has is kept. */
async function refreshUser(
  deps: LdapDeps,
  user: UserRow,
  fields: { name: string; email: string },
  log: FastifyBaseLogger,
): Promise<UserRow> {
  if (user.external !== 1) throw forbidden(coded('ldap_local_account'));
  const patch: Updateable<UserTable> = {};
  if (fields.name !== user.name) patch.name = fields.name;
  if (fields.email.toLowerCase() !== user.email.toLowerCase()) {
    if (await findOtherUserByLogin(deps.db, fields.email, user.id))
      log.warn(
        { user_id: user.id, username: user.username },
        'LDAP e-mail of this user is already another user’s: the old one is kept',
      );
    else patch.email = fields.email;
  }
  if (Object.keys(patch).length === 0) return user;
  await updateUserRow(deps.db, user.id, patch);
  await recordEvent(deps.db, {
    project_id: null,
    user_id: user.id,
    object_type: 'user',
    object_id: user.id,
    description: `User ${user.username} ${Object.keys(patch).join(' and ')} updated from the LDAP directory`,
  });
  return found(await findUserById(deps.db, user.id), 'user');
}
