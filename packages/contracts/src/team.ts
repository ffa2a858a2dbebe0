import { z } from 'zod';
import { issue } from './errors';
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

const role = z.enum(projectRoles);

export const teamMemberInput = z.object({
  user_id: z.number().int().positive(issue('required')).max(2_147_483_647),
  role,
});
export type TeamMemberInput = z.infer<typeof teamMemberInput>;

export const teamRoleInput = z.object({ role });
export type TeamRoleInput = z.infer<typeof teamRoleInput>;

export const teamSortFields = ['name', 'username', 'email', 'role'] as const;

/** Query of GET project/{id}/users: sort by name, username, email or role; asc or desc (default name asc). */
export const teamListQuery = z.object({
  sort: z
    .enum(teamSortFields)
    .optional()
    .transform((v) => v ?? 'name'),
  order: z
    .enum(['asc', 'desc'])
    .optional()
    .transform((v) => v ?? 'asc'),
});
export type TeamListQuery = z.infer<typeof teamListQuery>;
