import { z } from 'zod';
import { id } from './common';
import { issue } from './errors';
import { projectRoles } from './permissions';

/** pending until the user answers; expired is a pending invite whose time ran out. */
export const inviteStatuses = ['pending', 'accepted', 'declined', 'expired'] as const;
export type InviteStatus = (typeof inviteStatuses)[number];

/** Invites expire after this many days unless the request names another time. */
export const INVITE_DEFAULT_DAYS = 7;
/** The latest expiry a request may name, in days from now. */
export const INVITE_MAX_DAYS = 365;

/**
 * A user an invite names (the invited user, the inviter): who they are, never their flags, which a project
 * member who is no administrator may not see.
 */
export const inviteUserSchema = z.strictObject({
  id: z.number().int(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
});
export type InviteUser = z.infer<typeof inviteUserSchema>;

/** An invite into a project, as GET project/{id}/invites lists it (the peer's ProjectInvite). */
export const projectInviteSchema = z.strictObject({
  id: z.number().int(),
  project_id: z.number().int(),
  user_id: z
    .number()
    .int()
    .optional()
    .describe(
      'The invited user. Absent (as in Semaphore) for an invite of an e-mail address nobody has an account for: set once an account with that address is created.',
    ),
  email: z.string().describe("The e-mail address invited (the invited user's when the invite was made)."),
  role: z.enum(projectRoles).describe('The role the user gets on accepting.'),
  status: z.enum(inviteStatuses),
  inviter_user_id: z
    .number()
    .int()
    .nullable()
    .describe('The user who made the invite; null once their account is deleted.'),
  created: z.string().describe('When the invite was made (ISO 8601).'),
  expires_at: z.string().nullable().describe('When the invite expires (ISO 8601); null: never.'),
  accepted_at: z
    .string()
    .optional()
    .describe('When the user accepted (ISO 8601); absent until then, as in Semaphore.'),
  inviter_user: inviteUserSchema.nullable(),
  user: inviteUserSchema.optional().describe('The invited user; absent while no account has the address.'),
});
export type ProjectInvite = z.infer<typeof projectInviteSchema>;

/** What became of the e-mail an invite of an address without an account sends. */
export const inviteMailStatuses = ['sent', 'failed', 'not_configured'] as const;
export type InviteMailStatus = (typeof inviteMailStatuses)[number];

/** The answer of POST project/{id}/invites: the invite and its token, shown this once. */
export const projectInviteCreatedSchema = projectInviteSchema.extend({
  token: z
    .string()
    .describe(
      'The token the invited user may accept or decline with (POST /api/invites/accept); shown only here.',
    ),
  mail_status: z
    .enum(inviteMailStatuses)
    .optional()
    .describe(
      "An invite of an address nobody has an account for is e-mailed: sent, failed (the server's log says why), or not_configured (SIGNALBOX_EMAIL_ALERT is off). Absent for an invite of an existing user, who finds it in the console.",
    ),
});

/** One of the caller's own invites (GET /api/user/invites), with the name of the project it is into. */
export const userInviteSchema = projectInviteSchema.extend({ project_name: z.string() });
export type UserInvite = z.infer<typeof userInviteSchema>;

const role = z.enum(projectRoles);

/** An absent, null or empty optional text is no value. */
const optionalText = () =>
  z
    .string()
    .trim()
    .max(255)
    .nullish()
    .transform((v) => v || undefined);

/**
 * POST project/{id}/invites: the user to invite (by id, e-mail address or username: exactly one), the role they
 * get, and an optional expiry (ISO 8601 with a time zone; default INVITE_DEFAULT_DAYS days from now). An e-mail
 * address nobody has an account for is invited as it is (the invite is e-mailed to it).
 */
export const projectInviteInput = z
  .object({
    user_id: id().nullish(),
    email: optionalText(),
    username: optionalText(),
    role,
    expires_at: z
      .string()
      .max(40)
      .pipe(z.iso.datetime({ offset: true }))
      .nullish()
      .transform((v) => v ?? undefined),
  })
  .superRefine((input, ctx) => {
    const named = [input.user_id, input.email, input.username].filter((v) => v != null).length;
    if (named === 0)
      ctx.addIssue({ code: 'custom', path: ['user_id'], message: issue('invite_who_required') });
    if (named > 1) ctx.addIssue({ code: 'custom', path: ['user_id'], message: issue('invite_one_user') });
  });
export type ProjectInviteInput = z.infer<typeof projectInviteInput>;

export const inviteSortFields = ['created', 'status', 'role'] as const;

/** Query of GET project/{id}/invites: sort by created, status or role; asc or desc (default newest first). */
export const inviteListQuery = z.object({
  sort: z
    .enum(inviteSortFields)
    .optional()
    .transform((v) => v ?? 'created'),
  order: z
    .enum(['asc', 'desc'])
    .optional()
    .transform((v) => v ?? 'desc'),
});
export type InviteListQuery = z.infer<typeof inviteListQuery>;

/** POST /api/invites/accept and /api/invites/decline: the token the invite was made with. */
export const inviteTokenInput = z.object({
  token: z.string().trim().min(1).max(128),
});
