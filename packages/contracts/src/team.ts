import { z } from 'zod';
import { messages } from './common';
import { projectRoles } from './permissions';

/** A user who may be added to a project (GET project/{id}/users/candidates; no e-mail or flags). */
export const teamCandidateSchema = z.strictObject({
  id: z.number().int().describe("The user's id."),
  name: z.string(),
  username: z.string(),
});
export type TeamCandidate = z.infer<typeof teamCandidateSchema>;

/** A member of a project as GET project/{id}/users lists it. */
export const projectUserSchema = z.strictObject({
  id: z.number().int().describe("The user's id, as in the peer (the same as `user_id`)."),
  user_id: z.number().int(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
  role: z.enum(projectRoles),
});
export type ProjectUser = z.infer<typeof projectUserSchema>;

const roleMessage = `Role must be one of ${projectRoles.join(', ')}`;

const role = z.enum(projectRoles, {
  error: (issue) =>
    issue.input === undefined || issue.input === null || issue.input === ''
      ? messages.required('Role')
      : roleMessage,
});

export const teamMemberInput = z.object({
  user_id: z
    .number({
      error: (issue) =>
        issue.input === undefined || issue.input === null
          ? messages.required('User')
          : 'User must be a number',
    })
    .int('User must be an integer')
    .positive(messages.required('User'))
    .max(2_147_483_647, 'User is too large'),
  role,
});
export type TeamMemberInput = z.infer<typeof teamMemberInput>;

export const teamRoleInput = z.object({ role });
export type TeamRoleInput = z.infer<typeof teamRoleInput>;

export const teamSortFields = ['name', 'username', 'email', 'role'] as const;

/** Query of GET project/{id}/users: sort by name, username, email or role; asc or desc (default name asc). */
export const teamListQuery = z.object({
  sort: z
    .enum(teamSortFields, { error: `Sort must be one of ${teamSortFields.join(', ')}` })
    .optional()
    .transform((v) => v ?? 'name'),
  order: z
    .enum(['asc', 'desc'], { error: 'Order must be asc or desc' })
    .optional()
    .transform((v) => v ?? 'asc'),
});
export type TeamListQuery = z.infer<typeof teamListQuery>;
