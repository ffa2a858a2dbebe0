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

export const apiTokenInput = z
  .object({
    name: z.string().trim().max(100, messages.tooLong('Name', 100)).nullish(),
  })
  .nullish();

export type ApiToken = { id: string; name: string; created: string; expired: boolean; user_id: number };
export type ApiTokenCreated = ApiToken & { token: string };
