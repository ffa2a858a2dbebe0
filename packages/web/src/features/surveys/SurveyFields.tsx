import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import {
  Autocomplete,
  Box,
  Button,
  Chip,
  FormControl,
  FormControlLabel,
  FormHelperText,
  FormLabel,
  IconButton,
  MenuItem,
  Stack,
  Switch,
  TextField,
} from '@mui/material';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../i18n/messages';
import { type Answer, type Answers, type KvRow, type SurveyField, visibleFields } from './survey-form';

/**
 * The survey questions of the run dialog (and of the editor's preview): one input per shown field, by type, with
 * the field's help text, or its error (`errors`, already worded) in its place. `fetchedLater` names the fields
 * whose options a source gives only when the task starts (the preview has none to offer).
 */
export function SurveyFields({
  fields,
  answers,
  onChange,
  errors = {},
  fetchedLater,
  idPrefix = 'survey',
}: {
  fields: SurveyField[];
  answers: Answers;
  onChange: (name: string, value: Answer) => void;
  errors?: Record<string, string>;
  fetchedLater?: ReadonlySet<string>;
  idPrefix?: string;
}) {
  const shown = visibleFields(fields, answers);
  return (
    <>
      {fields
        .filter((f) => shown.has(f.name))
        .map((f) => (
          <SurveyInput
            key={f.name}
            field={f}
            id={`${idPrefix}-${f.name}`}
            value={answers[f.name]}
            onChange={(v) => onChange(f.name, v)}
            error={errors[f.name]}
            fetchedLater={fetchedLater?.has(f.name) ?? false}
          />
        ))}
    </>
  );
}

/** One survey question's input, by its type (also the editor's typed default). */
export function SurveyInput({
  field: f,
  id,
  value,
  onChange,
  error,
  fetchedLater,
}: {
  field: SurveyField;
  id: string;
  value: Answer | undefined;
  onChange: (v: Answer) => void;
  error?: string;
  fetchedLater: boolean;
}) {
  const { t } = useTranslation();
  const optionsError = f.optionsError ? translateCode(f.optionsError, t, f.name, f.title) : undefined;
  const note = fetchedLater ? t('survey.preview.fetchedLater') : undefined;
  const helper = error ?? optionsError ?? note ?? (f.description || undefined);
  const invalid = !!error || !!optionsError;
  const text = typeof value === 'string' ? value : '';
  const common = {
    id,
    label: f.title,
    required: f.required,
    name: `survey.${f.name}`,
    error: invalid,
    helperText: helper,
    fullWidth: true,
  };

  switch (f.type) {
    case 'boolean':
      return (
        <FormControl error={invalid}>
          <FormControlLabel
            control={
              <Switch
                checked={value === true}
                onChange={(e) => onChange(e.target.checked)}
                name={common.name}
                slotProps={{ input: { id, 'aria-describedby': helper ? `${id}-helper` : undefined } }}
              />
            }
            label={f.title}
          />
          {helper && <FormHelperText id={`${id}-helper`}>{helper}</FormHelperText>}
        </FormControl>
      );
    case 'enum':
      return (
        <TextField select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          {!f.required && (
            <MenuItem value="">
              <em>{t('res.none')}</em>
            </MenuItem>
          )}
          {(f.options ?? []).map((o) => (
            <MenuItem key={o.value} value={o.value}>
              {o.label}
            </MenuItem>
          ))}
          {(f.options ?? []).length === 0 && (
            <MenuItem disabled value="__none">
              {t('survey.run.noOptions')}
            </MenuItem>
          )}
        </TextField>
      );
    case 'multiselect': {
      const options = f.options ?? [];
      const selected = Array.isArray(value) ? (value as string[]) : [];
      const labelOf = (v: string) => options.find((o) => o.value === v)?.label ?? v;
      return (
        <Autocomplete
          multiple
          id={id}
          options={options.map((o) => o.value)}
          getOptionLabel={labelOf}
          value={selected}
          onChange={(_, next) => onChange(next)}
          filterSelectedOptions
          noOptionsText={t('survey.run.noOptions')}
          renderValue={(values, getItemProps) =>
            values.map((v, index) => {
              const { key, ...item } = getItemProps({ index });
              return <Chip key={key} size="small" label={labelOf(v)} {...item} />;
            })
          }
          renderInput={(params) => (
            <TextField
              {...params}
              label={f.title}
              required={f.required}
              name={common.name}
              error={invalid}
              helperText={helper}
            />
          )}
        />
      );
    }
    case 'kv':
      return (
        <KvInput
          field={f}
          id={id}
          rows={Array.isArray(value) ? (value as KvRow[]) : []}
          onChange={onChange}
          helper={helper}
          invalid={invalid}
        />
      );
    case 'int':
      // A text input as Semaphore's whole numbers always had (the server names an answer that is not one).
      return (
        <TextField
          {...common}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          slotProps={{ htmlInput: { inputMode: 'numeric' } }}
        />
      );
    case 'number':
      return (
        <TextField
          {...common}
          type="number"
          value={text}
          onChange={(e) => onChange(e.target.value)}
          slotProps={{
            htmlInput: {
              min: f.minimum,
              max: f.maximum,
              step: f.step ?? 'any',
              inputMode: 'decimal',
            },
          }}
        />
      );
    case 'date':
    case 'datetime':
      return (
        <TextField
          {...common}
          type={f.type === 'date' ? 'date' : 'datetime-local'}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
      );
    default: {
      const secret = f.type === 'secret';
      return (
        <TextField
          {...common}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          multiline={f.type === 'text'}
          minRows={f.type === 'text' ? 3 : undefined}
          type={secret ? 'password' : 'text'}
          autoComplete={secret ? 'new-password' : undefined}
          slotProps={{ htmlInput: { minLength: f.minLength, maxLength: f.maxLength, pattern: f.pattern } }}
        />
      );
    }
  }
}

/** A kv answer: key/value rows with add and remove. */
function KvInput({
  field: f,
  id,
  rows,
  onChange,
  helper,
  invalid,
}: {
  field: SurveyField;
  id: string;
  rows: KvRow[];
  onChange: (v: KvRow[]) => void;
  helper?: string;
  invalid: boolean;
}) {
  const { t } = useTranslation();
  const set = (index: number, patch: Partial<KvRow>) =>
    onChange(rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));
  return (
    <FormControl component="fieldset" error={invalid} aria-describedby={helper ? `${id}-helper` : undefined}>
      <FormLabel component="legend" required={f.required}>
        {f.title}
      </FormLabel>
      <Stack spacing={1} sx={{ mt: 1 }}>
        {rows.map((row, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place
          <Box key={index} sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
            <TextField
              size="small"
              label={t('survey.run.key')}
              value={row.key}
              onChange={(e) => set(index, { key: e.target.value })}
              sx={{ flex: 1, minWidth: 0 }}
              slotProps={{
                htmlInput: { 'aria-label': t('survey.run.keyOf', { field: f.title, n: index + 1 }) },
              }}
            />
            <TextField
              size="small"
              label={t('survey.run.value')}
              value={row.value}
              onChange={(e) => set(index, { value: e.target.value })}
              sx={{ flex: 1, minWidth: 0 }}
              slotProps={{
                htmlInput: { 'aria-label': t('survey.run.valueOf', { field: f.title, n: index + 1 }) },
              }}
            />
            <IconButton
              size="small"
              aria-label={t('survey.run.removeRow', { field: f.title, n: index + 1 })}
              onClick={() => onChange(rows.filter((_, i) => i !== index))}
            >
              <DeleteIcon fontSize="small" />
            </IconButton>
          </Box>
        ))}
      </Stack>
      <Box>
        <Button
          size="small"
          startIcon={<AddIcon />}
          onClick={() => onChange([...rows, { key: '', value: '' }])}
          aria-label={t('survey.run.addRowTo', { field: f.title })}
        >
          {t('survey.run.addRow')}
        </Button>
      </Box>
      {helper && <FormHelperText id={`${id}-helper`}>{helper}</FormHelperText>}
    </FormControl>
  );
}
