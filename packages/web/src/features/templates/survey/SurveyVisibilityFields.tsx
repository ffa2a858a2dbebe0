import { Autocomplete, Chip, MenuItem, TextField, Typography } from '@mui/material';
import type { SurveyVar, VisibleWhen } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/**
 * When a variable is asked: always, or while an earlier variable has one of some values (an enum's or a boolean's
 * offered to pick, any other typed in).
 */
export function SurveyVisibilityFields({
  earlier,
  value: condition,
  onChange,
  error,
}: {
  earlier: SurveyVar[];
  value: VisibleWhen | null;
  onChange: (v: VisibleWhen | null) => void;
  error?: string;
}) {
  const { t } = useTranslation();
  const conditionVar = earlier.find((e) => e.name === condition?.field);
  const conditionOptions = !conditionVar
    ? []
    : conditionVar.type === 'boolean'
      ? ['true', 'false']
      : conditionVar.options_source
        ? []
        : conditionVar.values.map((o) => o.value);
  const optionLabel = (value: string) => {
    if (conditionVar?.type === 'boolean') return t(value === 'true' ? 'survey.yes' : 'survey.no');
    return conditionVar?.values.find((o) => o.value === value)?.name ?? value;
  };
  return (
    <>
      <Typography variant="subtitle2" component="h4">
        {t('survey.visibility')}
      </Typography>
      <TextField
        select
        size="small"
        label={t('survey.visibleWhenField')}
        value={condition?.field ?? ''}
        onChange={(e) => onChange(e.target.value ? { field: e.target.value, values: [] } : null)}
        helperText={earlier.length === 0 ? t('survey.visibleNoEarlier') : undefined}
      >
        <MenuItem value="">
          <em>{t('survey.visibleAlways')}</em>
        </MenuItem>
        {earlier.map((e) => (
          <MenuItem key={e.name} value={e.name}>
            {e.title || e.name} ({e.name})
          </MenuItem>
        ))}
      </TextField>
      {condition && (
        <Autocomplete
          multiple
          freeSolo={conditionOptions.length === 0}
          options={conditionOptions}
          getOptionLabel={optionLabel}
          value={condition.values}
          onChange={(_, values) => onChange({ field: condition.field, values: values.map(String) })}
          renderValue={(values, getItemProps) =>
            values.map((value, index) => {
              const { key, ...rest } = getItemProps({ index });
              return <Chip key={key} size="small" label={optionLabel(String(value))} {...rest} />;
            })
          }
          renderInput={(params) => (
            <TextField
              {...params}
              size="small"
              label={t('survey.visibleWhenValues')}
              helperText={
                error ?? (conditionOptions.length === 0 ? t('survey.visibleValuesTyped') : undefined)
              }
              error={!!error}
            />
          )}
        />
      )}
    </>
  );
}
