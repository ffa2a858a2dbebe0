import { Autocomplete, TextField } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { useRunnerTags } from './api';

/**
 * The `runner_tag` of a template or inventory: free text, suggesting the tags the project's and the global
 * runners carry. Empty means "any runner (or the server itself)".
 */
export function RunnerTagField({
  projectId,
  value,
  onChange,
  disabled,
  error,
  helperText,
}: {
  projectId: number;
  value: string | null | undefined;
  onChange: (value: string) => void;
  disabled?: boolean;
  error?: boolean;
  helperText?: string;
}) {
  const { t } = useTranslation();
  const tags = useRunnerTags(projectId).data ?? [];
  return (
    <Autocomplete
      freeSolo
      options={tags}
      value={value ?? ''}
      inputValue={value ?? ''}
      disabled={disabled}
      onInputChange={(_e, next) => onChange(next)}
      onChange={(_e, next) => onChange(typeof next === 'string' ? next : '')}
      renderInput={(params) => (
        <TextField
          {...params}
          label={t('runners.runnerTag')}
          name="runner_tag"
          error={error}
          helperText={helperText ?? t('runners.runnerTagHelp')}
        />
      )}
    />
  );
}
