import type { ProjectRole, ProjectUser, TeamListQuery, TeamMemberInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import { findUserById, type UserRow } from '../../access/principals.store';
import { recordProjectEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { badRequest, conflict, found, notFound } from '../../lib/errors';
import {
  countOwners,
  deleteMember,
  findMember,
  insertMember,
  listMembers,
  updateMemberRole,
} from './team.store';

export const OWNER_CANNOT_LEAVE = coded('owner_cannot_leave');
export const LAST_OWNER = coded('last_owner');

// Made on first use: a collator pages in a few MB of ICU data an idle server does not need.
let collator: Intl.Collator | undefined;
function compareNames(a: string, b: string) {
  collator ??= new Intl.Collator('en', { sensitivity: 'base', numeric: true });
  return collator.compare(a, b);
}

/**
 * Members sorted by one column. Sorting happens here rather than in SQL so that the order is the same on every
 * dialect (their collations disagree on case); a team is small.
 */
export async function listTeam(
  deps: Pick<Deps, 'db'>,
  projectId: number,
  query: TeamListQuery,
): Promise<ProjectUser[]> {
  const members = await listMembers(deps.db, projectId);
  const direction = query.order === 'desc' ? -1 : 1;
  return members.sort(
    (a, b) => direction * (compareNames(a[query.sort], b[query.sort]) || a.user_id - b.user_id),
  );
}

export async function addMember(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  projectId: number,
  input: TeamMemberInput,
) {
  const user = await findUserById(deps.db, input.user_id);
  if (!user)
    throw badRequest(coded('user_not_found', { id: input.user_id }), {
      user_id: coded('not_found', { what: 'user' }),
    });
  if (await findMember(deps.db, projectId, user.id)) {
    throw conflict(coded('already_member', { username: user.username }));
  }
  try {
    await transaction(deps.db, async (trx, onCommit) => {
      await insertMember(trx, projectId, user.id, input.role);
      const description = `User ${user.username} added to the team as ${input.role}`;
      await recordProjectEvent(trx, actor, projectId, 'user', user.id, description, {
        kind: 'member.added',
        params: { name: user.username, role: input.role },
      });
      onCommit(() => deps.bus.emit('membership', { userId: user.id }));
    });
  } catch (err) {
    // Two requests adding the same user at once: the unique index answers for the loser.
    if (await findMember(deps.db, projectId, user.id)) {
      throw conflict(coded('already_member', { username: user.username }));
    }
    throw err;
  }
  return found(await findMember(deps.db, projectId, user.id), 'member');
}

async function mustFindMember(deps: Pick<Deps, 'db'>, projectId: number, userId: number) {
  const member = await findMember(deps.db, projectId, userId);
  if (!member) throw notFound('member');
  return member;
}

export async function changeRole(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  projectId: number,
  userId: number,
  role: ProjectRole,
) {
  const member = await mustFindMember(deps, projectId, userId);
  if (member.role === role) return;
  if (member.role === 'owner' && (await countOwners(deps.db, projectId)) <= 1) throw badRequest(LAST_OWNER);
  await transaction(deps.db, async (trx, onCommit) => {
    await updateMemberRole(trx, projectId, userId, role);
    const description = `User ${member.username} role changed from ${member.role} to ${role}`;
    await recordProjectEvent(trx, actor, projectId, 'user', userId, description, {
      kind: 'member.changed',
      params: { name: member.username, from: member.role, role },
    });
    onCommit(() => deps.bus.emit('membership', { userId }));
  });
}

export async function removeMember(
  deps: Pick<Deps, 'db' | 'bus'>,
  actor: UserRow,
  projectId: number,
  userId: number,
) {
  const member = await mustFindMember(deps, projectId, userId);
  if (member.role === 'owner' && (await countOwners(deps.db, projectId)) <= 1) throw badRequest(LAST_OWNER);
  await transaction(deps.db, async (trx, onCommit) => {
    await deleteMember(trx, projectId, userId);
    const description = `User ${member.username} removed from the team`;
    await recordProjectEvent(trx, actor, projectId, 'user', userId, description, {
      kind: 'member.removed',
      params: { name: member.username },
    });
    // Their open sockets stop getting this project's messages at once, before the answer goes out.
    onCommit(() => deps.bus.emit('accessRevoked', { userId, projectId }));
  });
}

/** DELETE project/{id}/me: any member but an owner may leave. */
export async function leaveProject(deps: Pick<Deps, 'db' | 'bus'>, actor: UserRow, projectId: number) {
  const member = await findMember(deps.db, projectId, actor.id);
  if (!member) throw badRequest(coded('not_project_member'));
  if (member.role === 'owner') throw badRequest(OWNER_CANNOT_LEAVE);
  await transaction(deps.db, async (trx, onCommit) => {
    await deleteMember(trx, projectId, actor.id);
    const description = `User ${member.username} left the project`;
    await recordProjectEvent(trx, actor, projectId, 'user', actor.id, description, {
      kind: 'member.left',
      params: { name: member.username },
    });
    onCommit(() => deps.bus.emit('accessRevoked', { userId: actor.id, projectId }));
  });
}
