import { z } from 'zod';
import { messages } from './common';

export const loginInput = z.object({
  auth: z
    .string({ error: messages.required('Username') })
    .trim()
    .min(1, messages.required('Username'))
    .max(255, messages.tooLong('Username', 255)),
  password: z
    .string({ error: messages.required('Password') })
    .min(1, messages.required('Password'))
    .max(255, messages.tooLong('Password', 255)),
});
export type LoginInput = z.infer<typeof loginInput>;

export type OidcProviderInfo = { id: string; name: string; color: string; icon: string };
export type LoginOptions = { oidc_providers: OidcProviderInfo[]; login_with_password: boolean };

/** Longest lifetime a token may be given: ten years. */
export const MAX_TOKEN_DAYS = 3650;

export const apiTokenInput = z
  .object({
    name: z.string().trim().max(100, messages.tooLong('Name', 100)).nullish(),
    /** Days until the token stops working; absent or null = it never expires. */
    expires_in_days: z
      .number({ error: 'Expires in days must be an integer' })
      .int('Expires in days must be an integer')
      .min(1, 'Expires in days must be at least 1')
      .max(MAX_TOKEN_DAYS, `Expires in days must be at most ${MAX_TOKEN_DAYS}`)
      .nullish(),
  })
  .nullish();

export type ApiToken = {
  id: string;
  name: string;
  created: string;
  /** When the token stops working (ISO 8601); null = never. */
  expires: string | null;
  expired: boolean;
  user_id: number;
};
export type ApiTokenCreated = ApiToken & { token: string };
