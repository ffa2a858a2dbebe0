import {
  coded,
  codeOfIssue,
  errorMessage,
  type ProjectBackup,
  projectRoles,
  userCreateInput,
} from '@signalbox/contracts';
import { z } from 'zod';
import { toBool } from '../../db/values';
import type { Deps } from '../../deps';
import { randomAlnum } from '../../lib/crypto';
import { badRequest } from '../../lib/errors';
import { checkBackup, readBackup, restoreProject } from '../project-backup';
import { listProjects } from '../projects';
import { deleteMember, insertMember, listMembers, updateMemberRole } from '../team';
import { findUserByLogin, insertUser, listUsers } from '../users';

/**
 * A whole instance in one file: every user (without password: a backup holds no secret) and every project in
 * the project backup format, with its members by login. Restored into an instance without projects.
 */
export const INSTANCE_BACKUP_FORMAT = 'signalbox-instance-backup';

const backupUser = userCreateInput.omit({ password: true });
const instanceBackup = z.object({
  format: z.literal(INSTANCE_BACKUP_FORMAT, { error: `format must be "${INSTANCE_BACKUP_FORMAT}"` }),
  version: z.literal(1, { error: 'version must be 1' }),
  created: z.string(),
  users: z.array(backupUser),
  projects: z.array(
    z.object({
      members: z.array(z.object({ username: z.string(), role: z.enum(projectRoles) })),
      backup: z.unknown(),
    }),
  ),
});
export type InstanceBackup = Omit<z.infer<typeof instanceBackup>, 'projects'> & {
  projects: { members: { username: string; role: (typeof projectRoles)[number] }[]; backup: ProjectBackup }[];
};

export async function readInstanceBackup(db: Deps['db']): Promise<InstanceBackup> {
  const users = (await listUsers(db)).sort((a, b) => a.username.localeCompare(b.username));
  const projects = await listProjects(db, 0, true);
  return {
    format: INSTANCE_BACKUP_FORMAT,
    version: 1,
    created: new Date().toISOString(),
    users: users.map((u) => ({
      username: u.username,
      name: u.name,
      email: u.email,
      admin: toBool(u.admin),
      alert: toBool(u.alert),
      external: toBool(u.external),
      can_create_project: toBool(u.can_create_project),
    })),
    projects: await Promise.all(
      projects.map(async (p) => ({
        members: (await listMembers(db, p.id)).map((m) => ({ username: m.username, role: m.role })),
        backup: await readBackup(db, p.id),
      })),
    ),
  };
}

export type RestoreSummary = {
  /** Users created, and of these the ones that sign in with a password: they need one set. */
  created: string[];
  needPassword: string[];
  /** Users whose login was already taken: left as they are. */
  kept: string[];
  projects: string[];
};

/**
 * Restores a backup into an instance that holds no project yet. Everything is checked before anything is
 * written; each project is then restored in its own transaction (by the first admin, who stays a member only
 * where the backup lists them).
 */
export async function restoreInstanceBackup(
  deps: Pick<Deps, 'config' | 'db' | 'dialect' | 'box' | 'log' | 'scheduler'>,
  body: unknown,
): Promise<RestoreSummary> {
  const parsed = instanceBackup.safeParse(body, { reportInput: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(
      coded('not_instance_backup', {
        detail: issue ? `${issue.path.join('.')} ${errorMessage(codeOfIssue(issue))}` : '',
      }),
    );
  }
  const backup = parsed.data;
  const projects = backup.projects.map((p) => ({ members: p.members, backup: checkBackup(p.backup) }));
  const logins = new Set(backup.users.map((u) => u.username));
  for (const p of projects)
    for (const m of p.members)
      if (!logins.has(m.username))
        throw badRequest(
          coded('restore_unknown_member', { project: p.backup.meta.name, username: m.username }),
        );
  if ((await listProjects(deps.db, 0, true)).length > 0)
    throw badRequest(coded('restore_needs_empty_instance'));
  const hasAdmin =
    backup.users.some((u) => u.admin) || (await listUsers(deps.db)).some((u) => toBool(u.admin));
  if (!hasAdmin && projects.length) throw badRequest(coded('restore_needs_admin'));

  const summary: RestoreSummary = { created: [], needPassword: [], kept: [], projects: [] };
  const toCreate = [];
  for (const user of backup.users) {
    if (await findUserByLogin(deps.db, user.username)) summary.kept.push(user.username);
    else if (await findUserByLogin(deps.db, user.email))
      throw badRequest(coded('restore_email_taken', { username: user.username, email: user.email }));
    else toCreate.push(user);
  }
  for (const user of toCreate) {
    // A password nobody knows: the backup has none, and an admin sets one (`signalbox user change-by-login`).
    await insertUser(deps.db, deps.dialect, { ...user, password: randomAlnum(32) });
    summary.created.push(user.username);
    if (!user.external) summary.needPassword.push(user.username);
  }

  const admin = (await listUsers(deps.db)).find((u) => toBool(u.admin));
  for (const { members, backup: project } of projects) {
    if (!admin) break;
    const { id } = await restoreProject(deps, admin, project);
    for (const member of members) {
      const user = await findUserByLogin(deps.db, member.username);
      if (!user) continue;
      if (user.id === admin.id) await updateMemberRole(deps.db, id, user.id, member.role);
      else await insertMember(deps.db, id, user.id, member.role);
    }
    // The admin who restored it leaves, unless the backup lists them, once the project has its own owner.
    if (members.some((m) => m.role === 'owner') && !members.some((m) => m.username === admin.username))
      await deleteMember(deps.db, id, admin.id);
    summary.projects.push(project.meta.name);
  }
  return summary;
}
