import { MenuItem, Stack, TextField } from '@mui/material';
import { type AccessKey, DEFAULT_VAULT_NAME, type VaultType } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useSignedInUser } from '../../../api/session';
import { useFieldProps } from '../../../components/messages';
import { mui } from '../../../components/mui';
import { idOptions, SelectField } from '../../../components/SelectField';
import type { SectionProps } from './values';

/** What the script field suggests: a client script kept in the repository. */
const SCRIPT_EXAMPLE = 'scripts/vault-client.py';

type Mode = 'none' | VaultType;
type VaultValue = {
  name?: string | null;
  type?: VaultType | null;
  vault_key_id?: number | null;
  script?: string;
};

/**
 * An Ansible template's vault (one at most): none, a password from a key, or a password script. Only
 * administrators may set a script or change its path (the server refuses others); anyone who edits the template
 * may keep it as it is or remove it. The vault's name is the vault id Ansible is given.
 */
export function VaultSection({ keys, ...section }: SectionProps & { keys: AccessKey[] }) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const admin = useSignedInUser().admin;
  const { form, errors, serverError } = section;
  const vault = (form.watch('vaults') ?? [])[0] as VaultValue | undefined;
  const mode: Mode = vault ? (vault.type ?? 'password') : 'none';
  const initialScript = (form.formState.defaultValues?.vaults?.[0] as VaultValue | undefined)?.script ?? '';
  // A non-administrator keeps the script the template has: never one of their own.
  const scriptLocked = !admin;
  const choose = (next: Mode) => {
    const name = vault?.name || DEFAULT_VAULT_NAME;
    const value: VaultValue[] =
      next === 'none'
        ? []
        : next === 'password'
          ? [{ name, type: 'password', vault_key_id: vault?.vault_key_id ?? null, script: '' }]
          : [{ name, type: 'script', vault_key_id: null, script: initialScript }];
    form.setValue('vaults', value, { shouldDirty: true });
    form.setValue('vault_key_id', null, { shouldDirty: true });
  };
  const vaultErrors = (errors.vaults as unknown as Record<string, { message?: string }>[] | undefined)?.[0];
  const usableKeys = keys.filter((k) => k.type === 'login_password');

  return (
    <Stack spacing={2}>
      <TextField
        select
        label={t('tpl.vault')}
        value={mode}
        onChange={(e) => choose(e.target.value as Mode)}
        {...field(undefined, serverError, 'vaults')}
      >
        <MenuItem value="none">
          <em>{t('res.none')}</em>
        </MenuItem>
        <MenuItem value="password">{t('tpl.vaultFromKey')}</MenuItem>
        <MenuItem value="script" disabled={scriptLocked && !initialScript}>
          {scriptLocked && !initialScript ? t('tpl.vaultScriptAdminsOnly') : t('tpl.vaultFromScript')}
        </MenuItem>
      </TextField>
      {mode === 'password' && (
        <SelectField
          control={form.control}
          name="vaults.0.vault_key_id"
          label={t('tpl.vaultKey')}
          options={idOptions(usableKeys)}
          required
          serverError={serverError}
        />
      )}
      {mode === 'script' && (
        <TextField
          required
          label={t('tpl.vaultScript')}
          placeholder={SCRIPT_EXAMPLE}
          disabled={scriptLocked}
          helperText={scriptLocked ? t('tpl.vaultScriptLocked') : t('tpl.vaultScriptHelp')}
          {...mui(form.register('vaults.0.script'))}
          {...field(vaultErrors?.script, serverError, 'vaults.0.script')}
        />
      )}
      {mode !== 'none' && (
        <TextField
          label={t('tpl.vaultName')}
          placeholder={DEFAULT_VAULT_NAME}
          helperText={t('tpl.vaultNameHelp')}
          {...mui(form.register('vaults.0.name'))}
          {...field(vaultErrors?.name, serverError, 'vaults.0.name')}
        />
      )}
    </Stack>
  );
}
