import { zodResolver } from '@hookform/resolvers/zod';
import { Alert, Box, Chip, Stack, TextField } from '@mui/material';
import { type AccessKey, type Repository, repositoryInput, repositoryType } from '@signalbox/contracts';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { useResourceSave } from '../../api/resources';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { idOptions, SelectField } from '../../components/SelectField';

type Values = z.input<typeof repositoryInput>;
const EXAMPLE_URL = 'git@example.com:org/repo.git';

/** The type chips, and the prefix each writes in front of the URL. */
export const urlTypes = [
  { type: 'ssh', prefix: 'ssh://' },
  { type: 'https', prefix: 'https://' },
  { type: 'http', prefix: 'http://' },
  { type: 'file', prefix: 'file://' },
  { type: 'git', prefix: 'git://' },
  { type: 'local', prefix: '/' },
] as const;

/** Rewrites the URL prefix for a chosen type, keeping the rest of the address. */
export function rewriteUrl(url: string, type: (typeof urlTypes)[number]['type']): string {
  const prefix = urlTypes.find((u) => u.type === type)?.prefix ?? '';
  const rest = url
    .trim()
    .replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\//, '')
    .replace(/^\/+/, '');
  return `${prefix}${rest}`;
}

export function RepositoryDialog({
  projectId,
  item,
  keys,
  readOnly,
  onClose,
}: {
  projectId: number;
  item: Repository | null;
  keys: AccessKey[];
  readOnly?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'repositories');
  const field = useFieldProps();
  const { register, handleSubmit, control, watch, setValue, formState } = useForm<Values>({
    resolver: zodResolver(repositoryInput),
    defaultValues: {
      name: item?.name ?? '',
      git_url: item?.git_url ?? '',
      git_branch: item?.git_branch ?? '',
      ssh_key_id: item?.ssh_key_id ?? (0 as number),
    },
  });
  const url = watch('git_url') ?? '';
  const type = repositoryType(url);
  const local = type === 'local';
  const errors = formState.errors;

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit((values) =>
    saveAndClose(
      { ...values, id: item?.id ?? null },
      t(item ? 'repos.saved' : 'repos.created', { name: values.name }),
    ),
  );

  return (
    <FormDialog
      open
      formId="repository-form"
      title={item ? t('repos.edit') : t('repos.new')}
      error={save.error}
      pending={save.isPending || readOnly}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        {readOnly && <Alert severity="info">{t('res.readOnly')}</Alert>}
        <TextField
          label={t('res.name')}
          required
          autoFocus
          disabled={readOnly}
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        <Box>
          <Box
            role="group"
            aria-label={t('repos.urlType')}
            sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.75, mb: 1 }}
          >
            {urlTypes.map((u) => (
              <Chip
                key={u.type}
                label={t(`repos.types.${u.type}`)}
                color={type === u.type ? 'primary' : 'default'}
                variant={type === u.type ? 'filled' : 'outlined'}
                disabled={readOnly}
                aria-pressed={type === u.type}
                onClick={() =>
                  setValue('git_url', rewriteUrl(url, u.type), { shouldValidate: formState.isSubmitted })
                }
              />
            ))}
          </Box>
          <TextField
            label={t('repos.url')}
            required
            fullWidth
            disabled={readOnly}
            placeholder={EXAMPLE_URL}
            slotProps={{ htmlInput: { spellCheck: false } }}
            {...mui(register('git_url'))}
            {...field(errors.git_url, save.error, 'git_url')}
          />
        </Box>
        <TextField
          label={t('repos.branch')}
          required={!local}
          disabled={readOnly || local}
          helperText={local ? t('repos.branchLocal') : undefined}
          {...mui(register('git_branch'))}
          {...field(errors.git_branch, save.error, 'git_branch')}
        />
        <SelectField
          control={control}
          name="ssh_key_id"
          label={t('repos.accessKey')}
          options={idOptions(keys)}
          required
          disabled={readOnly}
          serverError={save.error}
        />
      </Stack>
    </FormDialog>
  );
}
