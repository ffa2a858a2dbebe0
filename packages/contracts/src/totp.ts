import { z } from 'zod';
import { coded, issue } from './errors';

/**
 * Two-factor sign-in with time-based one-time passwords (TOTP), in the peer's routes: a user sets it up under
 * /api/users/{id}/2fas/totp, and a session signed in with a password then waits for POST /api/auth/verify (a code)
 * or POST /api/auth/recovery (a one-time recovery code).
 */

/** What every other route answers (401) to a session that still waits for its second factor (the peer's text). */
export const TOTP_REQUIRED = coded('totp_required');
/** POST /api/auth/verify and /api/auth/recovery when the server has TOTP (or recovery codes) turned off (403). */
export const TOTP_DISABLED = coded('totp_disabled');
/** Setting TOTP up when the server has it turned off (400). */
export const TOTP_NOT_ENABLED = coded('totp_not_enabled');
export const INCORRECT_PASSCODE = coded('incorrect_passcode');
export const INCORRECT_RECOVERY_CODE = coded('incorrect_recovery_code');
export const PASSCODE_FORMAT = issue('passcode_format');
export const RECOVERY_CODE_FORMAT = issue('recovery_code_format');

/** Digits of a code; spaces in between (as apps show them: "123 456") are ignored. */
export const totpPasscode = z
  .string()
  .max(32, PASSCODE_FORMAT)
  .transform((v) => v.replace(/\s+/g, ''))
  .pipe(
    z
      .string()
      .min(1)
      .regex(/^\d{6}$/, PASSCODE_FORMAT),
  );

/** A recovery code as shown (XXXX-XXXX-XXXX-XXXX), in any case, with or without its dashes and spaces. */
export const totpRecoveryCode = z
  .string()
  .max(64, RECOVERY_CODE_FORMAT)
  .transform((v) => v.replace(/[\s-]+/g, '').toUpperCase())
  .pipe(
    z
      .string()
      .min(1)
      .regex(/^[A-Z2-7]{16}$/, RECOVERY_CODE_FORMAT),
  );

/** POST /api/auth/verify, and the first code of a set-up (POST …/2fas/totp/{totp_id}/confirm). */
export const totpPasscodeInput = z.object({ passcode: totpPasscode });
export type TotpPasscodeInput = z.input<typeof totpPasscodeInput>;

/** POST /api/auth/recovery. */
export const totpRecoveryInput = z.object({ recovery_code: totpRecoveryCode });
export type TotpRecoveryInput = z.input<typeof totpRecoveryInput>;

/**
 * DELETE /api/users/{id}/2fas/totp/{totp_id}: users turning their own TOTP off prove it is them with a current code
 * or their password (an administrator resetting someone else's gives neither).
 */
export const totpDisableInput = z
  .object({
    passcode: totpPasscode.optional(),
    password: z.string().max(255).optional(),
  })
  .nullish()
  .transform((v) => v ?? {});
export type TotpDisableInput = z.input<typeof totpDisableInput>;

/** A user's TOTP as the user objects carry it (`totp`, present once it is turned on). */
export const userTotpSchema = z.strictObject({
  id: z.number().int(),
  created: z.string().describe('When the set-up began (ISO 8601)'),
  user_id: z.number().int(),
});
export type UserTotp = z.infer<typeof userTotpSchema>;

/** GET /api/users/{id}/2fas/totp. */
export const totpStatusSchema = userTotpSchema.extend({
  confirmed: z
    .boolean()
    .describe('Whether sign-in asks for a code: false while the set-up waits for its first code'),
  recovery_codes_left: z.number().int().describe('Unused recovery codes'),
});
export type TotpStatus = z.infer<typeof totpStatusSchema>;

/** POST /api/users/{id}/2fas/totp: a new set-up, waiting for its first code. The secret is shown only here. */
export const totpEnrollmentSchema = userTotpSchema.extend({
  secret: z.string().describe('The base32 secret, for entering into an authenticator app by hand'),
  url: z.string().describe('The otpauth:// URI the QR code (…/2fas/totp/{totp_id}/qr) encodes'),
});
export type TotpEnrollment = z.infer<typeof totpEnrollmentSchema>;

/** POST …/2fas/totp/{totp_id}/confirm: TOTP is on; its recovery codes are shown only here. */
export const totpConfirmedSchema = userTotpSchema.extend({
  recovery_codes: z
    .array(z.string())
    .describe('One-time recovery codes (empty when the server does not allow recovery codes)'),
});
export type TotpConfirmed = z.infer<typeof totpConfirmedSchema>;
