import { z } from 'zod';
import { flag, requiredString } from './common';
import { coded, issue } from './errors';
import { userTotpSchema } from './totp';

/** A user account: never the password hash. */
export const userSchema = z.strictObject({
  id: z.number().int(),
  created: z.string(),
  name: z.string(),
  username: z.string(),
  email: z.string(),
  admin: z.boolean(),
  alert: z.boolean(),
  external: z.boolean(),
  can_create_project: z.boolean(),
  sign_in_locked_until: z
    .string()
    .nullable()
    .optional()
    .describe(
      "Administrators viewing GET /api/users/{id} only: until when some address must wait before trying this user's password again after repeated failures (ISO 8601), or null when none must.",
    ),
  totp: userTotpSchema
    .optional()
    .describe('Present when the user has two-factor sign-in (TOTP) turned on (GET /api/user, /api/users)'),
});
export type User = z.infer<typeof userSchema>;

const password = z.string().min(1).max(255);

const email = z
  .string()
  .trim()
  .min(1)
  .max(255)
  // name@host: a host without a dot (admin@localhost, the first-start admin) is a valid address too.
  .regex(/^[^\s@]+@[^\s@]+$/, issue('invalid_email'));

const username = requiredString(255).regex(/^[^\s]+$/, issue('username_spaces'));

/**
 * POST users. The password is optional, as in Semaphore (a user of LDAP or OIDC, or one who gets a password
 * later): absent, null or empty, nobody signs in to the account with a password until one is set.
 */
export const userCreateInput = z.object({
  name: requiredString(255),
  username,
  email,
  password: z
    .string()
    .max(255)
    .nullish()
    .transform((v) => (v ? v : null)),
  admin: flag(),
  alert: flag(),
  external: flag(),
  can_create_project: flag(),
});

/** The caller's current password: required (by the server) when users change their own password. */
const currentPassword = z
  .string()
  .max(255)
  .nullish()
  .transform((v) => (v ? v : undefined));

/** Whether the user's API tokens stop working with the new password; absent or null = yes. */
const revokeTokens = z
  .boolean()
  .nullish()
  .transform((v) => v ?? true);

/** An optional flag of an update: absent keeps the stored value. */
const keepFlag = () =>
  z
    .boolean()
    .nullish()
    .transform((v) => v ?? undefined);

/**
 * Update (PUT users/{id}): name, username and email are required as on create; absent flags keep their stored
 * value; an absent or empty password keeps the password (POST users/{id}/password is the usual way).
 */
export const userUpdateInput = z.object({
  name: requiredString(255),
  username,
  email,
  admin: keepFlag(),
  alert: keepFlag(),
  can_create_project: keepFlag(),
  password: z
    .string()
    .max(255)
    .nullish()
    .transform((v) => (v ? v : undefined)),
  /** With a password: the caller's current one, as for POST users/{id}/password. */
  current_password: currentPassword,
  /** With a password: whether the user's API tokens stop working (default true). */
  revoke_tokens: revokeTokens,
});

export const CURRENT_PASSWORD_REQUIRED = coded('required', { field: 'current_password' });
export const CURRENT_PASSWORD_INCORRECT = coded('current_password_incorrect');

/**
 * POST users/{id}/password. Changing one's own password needs `current_password` (administrators resetting
 * someone else's do not give one); the user's other sessions end, and their API tokens too unless
 * `revoke_tokens` is false.
 */
export const passwordInput = z.object({
  password,
  current_password: currentPassword,
  revoke_tokens: revokeTokens,
});

/** The change-password form for one's own password: the current one is required there. */
export const ownPasswordInput = passwordInput.extend({
  current_password: z.string().min(1, issue('required')).max(255),
});
export type PasswordInput = z.input<typeof passwordInput>;
export type UserCreateInput = z.infer<typeof userCreateInput>;
export type UserUpdateInput = z.infer<typeof userUpdateInput>;
