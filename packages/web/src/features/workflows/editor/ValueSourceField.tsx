import { Box, MenuItem, TextField } from '@mui/material';
import type { WorkflowValueSource } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/** The outputs every template node has, offered first when a value comes from an upstream node. */
export const standardOutputs = ['task_id', 'version', 'commit_hash', 'status'];

export type SourceContext = {
  /** The workflow survey's variable names. */
  surveyNames: string[];
  /** The template nodes that run before this node: where an output may come from. */
  upstream: { id: string; title: string }[];
};

/** A fixed value as the user typed it: a number where a number is meant, else the text. */
function fixedValue(text: string, numeric: boolean): string | number {
  const trimmed = text.trim();
  return numeric && /^\d+$/.test(trimmed) ? Number(trimmed) : text;
}

/**
 * Where one value a template node runs with comes from: not set (when `optional`), fixed, the workflow survey's
 * answer, or an upstream node's output. `fixedOptions` turns the fixed value into a choice (an inventory, say).
 */
export function ValueSourceField({
  label,
  value,
  onChange,
  context,
  optional = false,
  numeric = false,
  fixedOptions,
  error,
  idPrefix,
}: {
  label: string;
  value: WorkflowValueSource | null;
  onChange: (value: WorkflowValueSource | null) => void;
  context: SourceContext;
  optional?: boolean;
  numeric?: boolean;
  fixedOptions?: { value: number | string; label: string }[];
  error?: string;
  idPrefix: string;
}) {
  const { t } = useTranslation();
  const from = value?.from ?? 'none';
  const pick = (next: string) => {
    if (next === 'none') onChange(null);
    else if (next === 'fixed') onChange({ from: 'fixed', value: fixedOptions?.[0]?.value ?? '' });
    else if (next === 'survey') onChange({ from: 'survey', name: context.surveyNames[0] ?? '' });
    else
      onChange({ from: 'output', node: context.upstream[0]?.id ?? '', name: standardOutputs[0] as string });
  };
  const errorProps = error ? { error: true, helperText: error } : {};
  return (
    <Box
      role="group"
      aria-label={label}
      sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'flex-start' }}
    >
      <TextField
        select
        size="small"
        label={label}
        value={from}
        onChange={(e) => pick(e.target.value)}
        sx={{ minWidth: 150, flex: '1 1 150px' }}
        id={`${idPrefix}-from`}
        {...(value ? {} : errorProps)}
      >
        {optional && <MenuItem value="none">{t('wf.source.none')}</MenuItem>}
        <MenuItem value="fixed">{t('wf.source.fixed')}</MenuItem>
        <MenuItem value="survey" disabled={context.surveyNames.length === 0}>
          {t('wf.source.survey')}
        </MenuItem>
        <MenuItem value="output" disabled={context.upstream.length === 0}>
          {t('wf.source.output')}
        </MenuItem>
      </TextField>
      {value?.from === 'fixed' &&
        (fixedOptions ? (
          <TextField
            select
            size="small"
            label={t('wf.source.value')}
            value={String(value.value ?? '')}
            onChange={(e) => onChange({ from: 'fixed', value: fixedValue(e.target.value, numeric) })}
            sx={{ flex: '2 1 180px' }}
            {...errorProps}
          >
            {fixedOptions.map((o) => (
              <MenuItem key={o.value} value={String(o.value)}>
                {o.label}
              </MenuItem>
            ))}
          </TextField>
        ) : (
          <TextField
            size="small"
            label={t('wf.source.value')}
            value={typeof value.value === 'string' ? value.value : JSON.stringify(value.value ?? '')}
            onChange={(e) => onChange({ from: 'fixed', value: fixedValue(e.target.value, numeric) })}
            sx={{ flex: '2 1 180px' }}
            slotProps={{ htmlInput: { maxLength: 10_000 } }}
            {...errorProps}
          />
        ))}
      {value?.from === 'survey' && (
        <TextField
          select
          size="small"
          label={t('wf.source.surveyVar')}
          value={value.name}
          onChange={(e) => onChange({ from: 'survey', name: e.target.value })}
          sx={{ flex: '2 1 180px' }}
          {...errorProps}
        >
          {context.surveyNames.map((n) => (
            <MenuItem key={n} value={n}>
              {n}
            </MenuItem>
          ))}
        </TextField>
      )}
      {value?.from === 'output' && (
        <>
          <TextField
            select
            size="small"
            label={t('wf.source.node')}
            value={value.node}
            onChange={(e) => onChange({ ...value, node: e.target.value })}
            sx={{ flex: '1 1 140px' }}
            {...errorProps}
          >
            {context.upstream.map((n) => (
              <MenuItem key={n.id} value={n.id}>
                {n.title}
              </MenuItem>
            ))}
          </TextField>
          <TextField
            size="small"
            label={t('wf.source.outputName')}
            value={value.name}
            onChange={(e) => onChange({ ...value, name: e.target.value })}
            sx={{ flex: '1 1 120px' }}
            slotProps={{ htmlInput: { maxLength: 100, list: `${idPrefix}-outputs` } }}
          />
          <datalist id={`${idPrefix}-outputs`}>
            {standardOutputs.map((o) => (
              <option key={o} value={o} />
            ))}
          </datalist>
        </>
      )}
    </Box>
  );
}
