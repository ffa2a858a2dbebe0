import { z } from 'zod';
import { optionalId } from './common';
import { issue } from './errors';

/**
 * A template's Ansible vault: one per template, named (the vault id Ansible is given, `--vault-id <name>@…`), whose
 * password is a key of the project (`password`) or what a script prints (`script`). Only administrators may set
 * or change a script: it runs on the machine that runs the task (docs/security.md).
 */

export const DEFAULT_VAULT_NAME = 'default';
export const vaultTypes = ['password', 'script'] as const;
export type VaultType = (typeof vaultTypes)[number];

/** The zod issue messages of a template's vault fields (see `issue`). */
export const vaultMessages = {
  one: issue('vault_one'),
  oneKey: issue('vault_one_key'),
  keyOrScript: issue('vault_key_or_script'),
  name: issue('vault_name_chars'),
  scriptControl: issue('control_chars'),
  scriptOutside: issue('path_outside'),
} as const;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Why a vault script path cannot be used, or null. An absolute path names a program on the machine that runs the
 * task; any other path is a file of the repository checkout and must not leave it (the server checks the real
 * path again after checkout, symbolic links included).
 */
export function vaultScriptProblem(path: string): string | null {
  if (CONTROL_CHARS.test(path)) return vaultMessages.scriptControl;
  if (path.startsWith('/')) return null;
  let depth = 0;
  for (const part of path.split('/')) {
    if (part === '..') depth -= 1;
    else if (part !== '' && part !== '.') depth += 1;
    if (depth < 0) return vaultMessages.scriptOutside;
  }
  return null;
}

/** One entry of a template's `vaults` (Semaphore's TemplateVault) as a request gives it. */
export const vaultInput = z.object({
  id: z.number().int().nullish(),
  name: z
    .string()
    .trim()
    .max(100)
    // Ansible reads `--vault-id <name>@<source>` up to the first "@".
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    .regex(/^[^@\u0000-\u001f\u007f]*$/, vaultMessages.name)
    .nullish()
    .transform((v) => v || DEFAULT_VAULT_NAME),
  type: z
    .enum(vaultTypes)
    .nullish()
    .transform((v) => v ?? 'password'),
  vault_key_id: optionalId(),
  script: z
    .string()
    .trim()
    .max(255)
    .nullish()
    .transform((v) => v ?? ''),
});
export type VaultInput = z.output<typeof vaultInput>;

/** The vault columns of a template: its password key, or its script, and its name (null: no vault). */
export type TemplateVaultColumns = {
  vault_key_id: number | null;
  vault_name: string | null;
  vault_script: string | null;
};

/** Checks a template's vault fields; `issue` reports each problem at its field's path. */
export function checkVaults(
  vaultKeyId: number | null | undefined,
  vaults: VaultInput[],
  report: (path: (string | number)[], message: string) => void,
) {
  if (vaults.length > 1) {
    const keys = new Set([vaultKeyId, ...vaults.map((v) => v.vault_key_id)].filter((k) => k != null));
    report(['vaults'], keys.size > 1 ? vaultMessages.oneKey : vaultMessages.one);
    return;
  }
  const [vault] = vaults;
  if (!vault) return;
  if (vault.type === 'script') {
    if (!vault.script) report(['vaults', 0, 'script'], issue('required'));
    const problem = vaultScriptProblem(vault.script);
    if (problem) report(['vaults', 0, 'script'], problem);
    if (vaultKeyId != null || vault.vault_key_id != null) report(['vaults'], vaultMessages.keyOrScript);
    return;
  }
  if (!vault.vault_key_id) report(['vaults', 0, 'vault_key_id'], issue('required'));
  else if (vaultKeyId != null && vaultKeyId !== vault.vault_key_id) report(['vaults'], vaultMessages.oneKey);
}

/**
 * The columns a template's vault fields store (checked by checkVaults first). The default name is stored as null,
 * so a vault named `default` and one given by `vault_key_id` alone are the same row.
 */
export function vaultColumns(vaultKeyId: number | null, vaults: VaultInput[]): TemplateVaultColumns {
  const [vault] = vaults;
  if (!vault) return { vault_key_id: vaultKeyId, vault_name: null, vault_script: null };
  const vault_name = vault.name === DEFAULT_VAULT_NAME ? null : vault.name;
  if (vault.type === 'script') return { vault_key_id: null, vault_name, vault_script: vault.script };
  return { vault_key_id: vault.vault_key_id ?? vaultKeyId, vault_name, vault_script: null };
}

/** A template's vault as the API answers it (Semaphore's list shape): none, or one. */
export const templateVaultSchema = z.strictObject({
  name: z.string(),
  type: z.enum(vaultTypes),
  vault_key_id: z
    .number()
    .int()
    .nullable()
    .describe('The key holding the password; null for a script vault.'),
  script: z
    .string()
    .describe(
      "The script printing the password (a path in the repository, or an absolute path on the machine that runs the task); '' for a password vault.",
    ),
});
export type TemplateVault = z.infer<typeof templateVaultSchema>;

/** The `vaults` a template row answers. */
export function templateVaultsOf(row: TemplateVaultColumns): TemplateVault[] {
  const name = row.vault_name || DEFAULT_VAULT_NAME;
  if (row.vault_script) return [{ name, type: 'script', vault_key_id: null, script: row.vault_script }];
  if (row.vault_key_id) return [{ name, type: 'password', vault_key_id: row.vault_key_id, script: '' }];
  return [];
}
