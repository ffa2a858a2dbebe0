import { type ProjectRole, projectRoles } from '@signalbox/contracts';
import { findUserById, type UserRow } from '../../access/principals.store';
import { recordEvent, recordProjectEvent } from '../../audit/audit.store';
import type { OidcProviderConfig } from '../../config';
import type { Deps } from '../../deps';
import { found } from '../../lib/errors';
import { findProject } from '../projects';
import { countOwners, deleteMember, findMember, insertMember, updateMemberRole } from '../team';
import { updateUserRow } from '../users';
import { type Claims, providerName } from './oidc.service';

/** The user's groups from the provider's groups claim: an array of names, or one comma/space separated string. */
export function groupsOf(claims: Claims, claim: string): Set<string> {
  const value = claims[claim];
  const names = Array.isArray(value)
    ? value.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String)
    : typeof value === 'string'
      ? value.split(/[\s,]+/)
      : [];
  return new Set(names.map((n) => n.trim()).filter(Boolean));
}

/** owner > manager > task_runner > guest: the order of `projectRoles`. */
const rank = (role: ProjectRole) => projectRoles.length - projectRoles.indexOf(role);

/**
 * For each project the provider's `project_roles` name, the role the groups give (the highest when several
 * groups map the same project), or null when none of the user's groups maps it.
 */
export function mappedRoles(
  p: Pick<OidcProviderConfig, 'project_roles'>,
  groups: Set<string>,
): Map<number, ProjectRole | null> {
  const roles = new Map<number, ProjectRole | null>();
  for (const { group, project_id, role } of p.project_roles) {
    const current = roles.get(project_id) ?? null;
    if (!groups.has(group)) {
      if (!roles.has(project_id)) roles.set(project_id, null);
      continue;
    }
    if (!current || rank(role) > rank(current)) roles.set(project_id, role);
  }
  return roles;
}

/** Which groups give which rights: an OIDC provider's `admin_groups` and `project_roles`, or LDAP's. */
export type GroupMapping = Pick<OidcProviderConfig, 'admin_groups' | 'project_roles'>;

/**
 * Where a user's groups came from: `via` ends the audit descriptions ("(groups of Corp SSO)"), `setting` names
 * the mapping in log lines, `log` adds fields to them.
 */
export type GroupSource = { via: string; setting: string; log: Record<string, unknown> };

/**
 * Applies the provider's group mappings to a user signing in (user-asks #23: external users should not land
 * without rights). `admin_groups`, when set, decides the admin flag both ways. Each project named in
 * `project_roles` follows the groups: the user is added with the mapped role, their role is changed to it,
 * or they are removed when no group maps that project any more — except the last owner, who stays. Projects
 * the mapping does not name are never touched, so memberships an admin grants by hand keep working.
 */
export async function applyGroupMappings(
  deps: Pick<Deps, 'db' | 'log' | 'bus'>,
  id: string,
  p: OidcProviderConfig,
  user: UserRow,
  claims: Claims,
): Promise<UserRow> {
  if (p.admin_groups.length === 0 && p.project_roles.length === 0) return user;
  const source = {
    via: `(groups of ${providerName(id, p)})`,
    setting: 'OIDC project_roles',
    log: { provider: id },
  };
  return applyGroupRoles(deps, source, p, user, groupsOf(claims, p.groups_claim));
}

/** The rules of applyGroupMappings for groups from any source (an OIDC claim, an LDAP directory). */
export async function applyGroupRoles(
  deps: Pick<Deps, 'db' | 'log' | 'bus'>,
  source: GroupSource,
  p: GroupMapping,
  user: UserRow,
  groups: Set<string>,
): Promise<UserRow> {
  if (p.admin_groups.length === 0 && p.project_roles.length === 0) return user;
  const via = source.via;
  let changed = false;

  if (p.admin_groups.length > 0) {
    const admin = p.admin_groups.some((g) => groups.has(g));
    if (admin !== (user.admin === 1)) {
      await updateUserRow(deps.db, user.id, { admin: admin ? 1 : 0 });
      // Their open sockets lose admin rights before anything else happens.
      if (!admin) deps.bus.emit('accessRevoked', { userId: user.id, projectId: null });
      await recordEvent(deps.db, {
        project_id: null,
        user_id: user.id,
        object_type: 'user',
        object_id: user.id,
        description: `User ${user.username} ${admin ? 'made an admin' : 'is no longer an admin'} ${via}`,
      });
      changed = true;
    }
  }

  for (const [projectId, role] of mappedRoles(p, groups)) {
    if (!(await findProject(deps.db, projectId))) {
      deps.log.warn(
        { ...source.log, project_id: projectId },
        `${source.setting} names a project that does not exist`,
      );
      continue;
    }
    const member = await findMember(deps.db, projectId, user.id);
    let description: string | undefined;
    if (role && !member) {
      try {
        await insertMember(deps.db, projectId, user.id, role);
      } catch (err) {
        // A concurrent sign-in of the same user added them first.
        if (!(await findMember(deps.db, projectId, user.id))) throw err;
        continue;
      }
      description = `User ${user.username} added to the team as ${role} ${via}`;
    } else if (role && member && member.role !== role) {
      if (member.role === 'owner' && (await countOwners(deps.db, projectId)) <= 1) continue;
      await updateMemberRole(deps.db, projectId, user.id, role);
      description = `User ${user.username} role changed from ${member.role} to ${role} ${via}`;
    } else if (!role && member) {
      if (member.role === 'owner' && (await countOwners(deps.db, projectId)) <= 1) continue;
      await deleteMember(deps.db, projectId, user.id);
      deps.bus.emit('accessRevoked', { userId: user.id, projectId });
      description = `User ${user.username} removed from the team ${via}`;
    }
    if (!description) continue;
    await recordProjectEvent(deps.db, user, projectId, 'user', user.id, description);
    changed = true;
  }

  if (!changed) return user;
  // Open sockets read the new rights at once (lost ones were taken away as they went).
  deps.bus.emit('membership', { userId: user.id });
  return found(await findUserById(deps.db, user.id), 'user');
}
