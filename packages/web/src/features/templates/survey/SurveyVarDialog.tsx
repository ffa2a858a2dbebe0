import { Box, Checkbox, FormControlLabel, MenuItem, Stack, TextField, Typography } from '@mui/material';
import {
  choiceTypes,
  numberTypes,
  type SurveyVar,
  type SurveyVarType,
  surveyVarSchema,
  surveyVarTypes,
  textTypes,
  typedSurveyDefault,
} from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormDialog } from '../../../components/FormDialog';
import { translateResourceMessage } from '../../../components/messages';
import { type SurveyField, SurveyInput, toAnswer, typedAnswer } from '../../surveys';
import { SurveyOptionsEditor } from './SurveyOptionsEditor';
import { SurveyVisibilityFields } from './SurveyVisibilityFields';

/** The types offered, '' (Semaphore's one-line text) shown as string. */
const types = surveyVarTypes.filter((ty) => ty !== '');
const patternTypes: readonly SurveyVarType[] = ['', 'string', 'text'];

/** A rule's number input: empty is "no such rule" (null). */
function RuleNumber({
  label,
  value,
  onChange,
  error,
  integer,
}: {
  label: string;
  value: number | null;
  onChange: (v: number | null) => void;
  error?: string;
  integer?: boolean;
}) {
  return (
    <TextField
      size="small"
      type="number"
      label={label}
      value={value ?? ''}
      onChange={(e) => onChange(e.target.value === '' ? null : Number(e.target.value))}
      slotProps={{ htmlInput: { step: integer ? 1 : 'any', min: integer ? 0 : undefined } }}
      sx={{ flex: 1, minWidth: 0 }}
      {...(error ? { error: true, helperText: error } : {})}
    />
  );
}

/** The default value's text (Semaphore's field) edited with the input of the variable's own type. */
function DefaultInput({ v, onChange }: { v: SurveyVar; onChange: (text: string) => void }) {
  const { t } = useTranslation();
  const field: SurveyField = {
    name: 'default_value',
    type: v.type || 'string',
    title: t('survey.defaultValue'),
    description: '',
    required: false,
    secret: v.type === 'secret',
    options: v.options_source ? null : v.values.map((o) => ({ value: o.value, label: o.name || o.value })),
    optionsError: null,
    visibleWhen: null,
  };
  // A choice taken from a source has no options here: its default is typed as text (one value per line).
  if (v.options_source && (v.type === 'enum' || v.type === 'multiselect'))
    return (
      <TextField
        label={t('survey.defaultValue')}
        value={v.default_value}
        onChange={(e) => onChange(e.target.value)}
        helperText={t('survey.defaultFromSource')}
      />
    );
  const answer = toAnswer(field, typedSurveyDefault({ type: field.type, default_value: v.default_value }));
  return (
    <SurveyInput
      field={field}
      id="survey-var-default"
      value={answer}
      fetchedLater={false}
      onChange={(next) => {
        const typed = typedAnswer(field, next);
        if (typed === undefined || (field.type === 'boolean' && typed === false)) onChange('');
        else onChange(typeof typed === 'string' ? typed : JSON.stringify(typed));
      }}
    />
  );
}

/**
 * One survey variable: name, title, type, help text, required, the rules its type has, its options (fixed values
 * or a source), default (typed) and the condition under which it is asked. `earlier` are the variables before it,
 * which a condition may name.
 */
export function SurveyVarDialog({
  projectId,
  item,
  earlier,
  onSave,
  onClose,
}: {
  projectId: number;
  item: SurveyVar;
  earlier: SurveyVar[];
  onSave: (v: SurveyVar) => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const [v, setV] = useState<SurveyVar>({ ...item, type: item.type || 'string', values: [...item.values] });
  const [errors, setErrors] = useState<Record<string, string>>({});
  /** Changes fields; their messages go (the next Save checks again). */
  const set = (patch: Partial<SurveyVar>) => {
    setV((old) => ({ ...old, ...patch }));
    setErrors((old) => {
      const next = { ...old };
      for (const k of Object.keys(patch)) delete next[k];
      if ('type' in patch || 'options_source' in patch) delete next.values;
      return next;
    });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    e.stopPropagation();
    // Rules the chosen type does not have are dropped (a type changed from string to int keeps no pattern).
    const ty = v.type;
    const cleaned: SurveyVar = {
      ...v,
      min_length: textTypes.includes(ty) ? v.min_length : null,
      max_length: textTypes.includes(ty) ? v.max_length : null,
      regex: patternTypes.includes(ty) ? v.regex : null,
      regex_message: patternTypes.includes(ty) && v.regex ? v.regex_message : '',
      min: numberTypes.includes(ty) ? v.min : null,
      max: numberTypes.includes(ty) ? v.max : null,
      step: numberTypes.includes(ty) ? v.step : null,
      min_selected: ty === 'multiselect' ? v.min_selected : null,
      max_selected: ty === 'multiselect' ? v.max_selected : null,
      values: choiceTypes.includes(ty) && !v.options_source ? v.values : [],
      options_source: choiceTypes.includes(ty) ? v.options_source : null,
    };
    const parsed = surveyVarSchema.safeParse(cleaned);
    if (!parsed.success) {
      const next: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        const key = String(issue.path[0] ?? 'values');
        next[key] ??= translateResourceMessage(issue.message, t, key);
      }
      setErrors(next);
      return;
    }
    onSave(parsed.data);
  };
  const err = (name: string) => (errors[name] ? { error: true, helperText: errors[name] } : {});
  const ty = v.type;

  return (
    <FormDialog
      open
      formId="survey-var-form"
      title={item.name ? t('survey.edit') : t('survey.add')}
      onSubmit={submit}
      onClose={onClose}
      maxWidth="sm"
    >
      <Stack spacing={2}>
        <TextField
          label={t('res.name')}
          required
          autoFocus
          value={v.name}
          onChange={(e) => set({ name: e.target.value })}
          helperText={t('survey.nameHelp')}
          {...err('name')}
        />
        <TextField
          label={t('res.title')}
          required
          value={v.title}
          onChange={(e) => set({ title: e.target.value })}
          {...err('title')}
        />
        <TextField
          label={t('survey.helpText')}
          multiline
          minRows={1}
          value={v.description}
          onChange={(e) => set({ description: e.target.value })}
          helperText={t('survey.helpTextHelp')}
        />
        <TextField
          select
          label={t('res.type')}
          value={ty}
          onChange={(e) => set({ type: e.target.value as SurveyVarType, default_value: '' })}
        >
          {types.map((option) => (
            <MenuItem key={option} value={option}>
              {t(`survey.types.${option}`)}
            </MenuItem>
          ))}
        </TextField>
        <FormControlLabel
          label={t('survey.required')}
          control={<Checkbox checked={v.required} onChange={(e) => set({ required: e.target.checked })} />}
        />
        {(textTypes.includes(ty) || numberTypes.includes(ty) || ty === 'multiselect') && (
          <Typography variant="subtitle2" component="h4">
            {t('survey.rules')}
          </Typography>
        )}
        {textTypes.includes(ty) && (
          <Box sx={{ display: 'flex', gap: 1 }}>
            <RuleNumber
              integer
              label={t('survey.minLength')}
              value={v.min_length}
              onChange={(n) => set({ min_length: n })}
              error={errors.min_length}
            />
            <RuleNumber
              integer
              label={t('survey.maxLength')}
              value={v.max_length}
              onChange={(n) => set({ max_length: n })}
              error={errors.max_length}
            />
          </Box>
        )}
        {patternTypes.includes(ty) && (
          <>
            <TextField
              size="small"
              label={t('survey.regex')}
              value={v.regex ?? ''}
              onChange={(e) => set({ regex: e.target.value || null })}
              helperText={t('survey.regexHelp')}
              slotProps={{ htmlInput: { spellCheck: false } }}
              {...err('regex')}
            />
            {v.regex && (
              <TextField
                size="small"
                label={t('survey.regexMessage')}
                value={v.regex_message}
                onChange={(e) => set({ regex_message: e.target.value })}
                {...err('regex_message')}
              />
            )}
          </>
        )}
        {numberTypes.includes(ty) && (
          <Box sx={{ display: 'flex', gap: 1 }}>
            <RuleNumber
              label={t('survey.min')}
              value={v.min}
              onChange={(n) => set({ min: n })}
              error={errors.min}
            />
            <RuleNumber
              label={t('survey.max')}
              value={v.max}
              onChange={(n) => set({ max: n })}
              error={errors.max}
            />
            <RuleNumber
              label={t('survey.step')}
              value={v.step}
              onChange={(n) => set({ step: n })}
              error={errors.step}
            />
          </Box>
        )}
        {ty === 'multiselect' && (
          <Box sx={{ display: 'flex', gap: 1 }}>
            <RuleNumber
              integer
              label={t('survey.minSelected')}
              value={v.min_selected}
              onChange={(n) => set({ min_selected: n })}
              error={errors.min_selected}
            />
            <RuleNumber
              integer
              label={t('survey.maxSelected')}
              value={v.max_selected}
              onChange={(n) => set({ max_selected: n })}
              error={errors.max_selected}
            />
          </Box>
        )}
        {choiceTypes.includes(ty) && (
          <SurveyOptionsEditor
            projectId={projectId}
            values={v.values}
            source={v.options_source}
            onChange={(patch) => set(patch)}
            error={errors.values ?? errors.options_source}
          />
        )}
        <DefaultInput v={v} onChange={(text) => set({ default_value: text })} />
        <SurveyVisibilityFields
          earlier={earlier}
          value={v.visible_when}
          onChange={(visible_when) => set({ visible_when })}
          error={errors.visible_when}
        />
      </Stack>
    </FormDialog>
  );
}
