import { z } from 'zod';
import { flag, optionalId, requiredNumber, requiredString } from './common';
import { issue } from './errors';

export const keyTypes = ['none', 'ssh', 'login_password'] as const;
export type KeyType = (typeof keyTypes)[number];

/**
 * Where a key's secret comes from: stored encrypted in the database (no source), or read at task time from the
 * server's environment variable ('env') or a file on the server ('file') that `source_storage_key` names. Only
 * administrators may create or change a key with a source.
 */
export const keySourceTypes = ['env', 'file'] as const;
export type KeySourceType = (typeof keySourceTypes)[number];
export const KEY_SOURCE_MAX = 1024;
/** The prefix environment variables read by keys must have unless the server sets another (see docs/configuration.md). */
export const DEFAULT_KEY_ENV_PREFIX = 'SIGNALBOX_KEY_';

/** The login a key signs in as; its secret (password, passphrase, private key) is never answered. */
const keyLoginSchema = z.strictObject({ login: z.string().describe('Who the key signs in as.') });

/**
 * A key as the API answers it. The secret never leaves the server: only the login is shown, so the edit form can
 * display who the key signs in as.
 */
export const accessKeySchema = z.strictObject({
  id: z.int(),
  name: z.string(),
  type: z.enum(keyTypes),
  project_id: z.int(),
  login_password: keyLoginSchema.optional().describe('Present for a key of type login_password.'),
  ssh: keyLoginSchema.optional().describe('Present for a key of type ssh.'),
  source_storage_type: z
    .enum(keySourceTypes)
    .optional()
    .describe("Present when the secret is read at task time: from the server's environment or a file."),
  source_storage_key: z
    .string()
    .optional()
    .describe('The environment variable name or file path the secret is read from (never the secret).'),
  has_secret: z
    .boolean()
    .describe(
      'Whether the key has its password (login_password) or private key (ssh): stored, or read from the server. ' +
        'False for type none and for a key restored from a backup, which carries no secrets. Never the secret.',
    ),
});
export type AccessKey = z.infer<typeof accessKeySchema>;

/** A required reference to another object of the project (0 and null count as missing). */
export const requiredRefId = () =>
  requiredNumber()
    .int()
    .min(0)
    .max(2_147_483_647)
    .refine((v) => v > 0, issue('required'));

/** Secrets may be long (certificate chains, tokens) but stay bounded. */
export const SECRET_MAX = 65_536;

const secretText = () =>
  z
    .string()
    .max(SECRET_MAX)
    .nullish()
    .transform((v) => v ?? '');

const login = z
  .string()
  .trim()
  .max(255)
  .nullish()
  .transform((v) => v ?? '');

const keyBase = z.object({
  id: optionalId(),
  project_id: optionalId(),
  name: requiredString(255),
  type: z.enum(keyTypes),
  override_secret: flag(),
  login_password: z.object({ login, password: secretText() }).nullish(),
  ssh: z.object({ login, passphrase: secretText(), private_key: secretText() }).nullish(),
  /** '' or null: the secret is stored; 'env' / 'file': it is read at task time from what source_storage_key names. */
  source_storage_type: z
    .enum(['', ...keySourceTypes])
    .nullish()
    .transform((v): KeySourceType | null => v || null),
  source_storage_key: z
    .string()
    .trim()
    .max(KEY_SOURCE_MAX)
    .nullish()
    .transform((v) => v ?? ''),
});
export type KeyInput = z.output<typeof keyBase>;

/** A key's missing or refused part: the field (a dotted path) and the code of the problem. */
export type KeyProblem = { field: string; code: 'required' | 'key_none_has_no_secret' };

/** What a key reading its secret from the server lacks; null when nothing is missing. */
export function keySourceProblem(
  input: Pick<KeyInput, 'type' | 'source_storage_type' | 'source_storage_key'>,
): KeyProblem | null {
  if (!input.source_storage_type) return null;
  if (input.type === 'none') return { field: 'source_storage_type', code: 'key_none_has_no_secret' };
  if (!input.source_storage_key) return { field: 'source_storage_key', code: 'required' };
  return null;
}

/**
 * What a key of its type needs before its secret can be stored; null when nothing is missing. The server also
 * applies it when the type of an existing key changes. A key reading its secret from the server needs only its
 * source.
 */
export function keySecretProblem(
  input: Pick<KeyInput, 'type' | 'login_password' | 'ssh'> &
    Partial<Pick<KeyInput, 'source_storage_type' | 'source_storage_key'>>,
): KeyProblem | null {
  if (input.source_storage_type)
    return keySourceProblem({
      type: input.type,
      source_storage_type: input.source_storage_type,
      source_storage_key: input.source_storage_key ?? '',
    });
  if (input.type === 'login_password' && !input.login_password?.password)
    return { field: 'login_password.password', code: 'required' };
  if (input.type === 'ssh' && !input.ssh?.private_key?.trim())
    return { field: 'ssh.private_key', code: 'required' };
  return null;
}

const requireSecret = (input: KeyInput, ctx: z.RefinementCtx) => {
  const problem = keySecretProblem(input);
  if (problem) ctx.addIssue({ code: 'custom', message: issue(problem.code), path: problem.field.split('.') });
};

/** A new key is always editable, so its secret is required. */
export const keyCreateInput = keyBase.superRefine(requireSecret);
/** An existing key keeps its stored secret unless `override_secret` is set; a source is always checked. */
export const keyUpdateInput = keyBase.superRefine((input, ctx) => {
  if (input.override_secret || input.source_storage_type) requireSecret(input, ctx);
});
