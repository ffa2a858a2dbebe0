import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import { Box, Button, IconButton, MenuItem, Stack, TextField, Typography } from '@mui/material';
import type { WorkflowValueSource } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type SourceContext, ValueSourceField } from './ValueSourceField';

/**
 * Named values a template node runs with (its template's survey answers, or extra variables), each with its
 * source. `names` offers the names to pick (a template's survey variables); without it a name is typed.
 */
export function MappingList({
  title,
  value,
  onChange,
  context,
  names,
  error,
  idPrefix,
}: {
  title: string;
  value: Record<string, WorkflowValueSource>;
  onChange: (value: Record<string, WorkflowValueSource>) => void;
  context: SourceContext;
  names?: string[];
  error?: string;
  idPrefix: string;
}) {
  const { t } = useTranslation();
  const [adding, setAdding] = useState('');
  const entries = Object.entries(value);
  const free = names?.filter((n) => !(n in value));
  const add = () => {
    const name = adding.trim();
    if (!name || name in value) return;
    onChange({ ...value, [name]: { from: 'fixed', value: '' } });
    setAdding('');
  };
  return (
    <Box component="section" aria-label={title}>
      <Typography variant="subtitle2" component="h3" sx={{ mb: 1 }}>
        {title}
      </Typography>
      {error && (
        <Typography variant="caption" color="error" component="p" role="alert" sx={{ mb: 1 }}>
          {error}
        </Typography>
      )}
      <Stack spacing={1.5}>
        {entries.map(([name, source]) => (
          <Box key={name} sx={{ display: 'flex', gap: 0.5, alignItems: 'flex-start' }}>
            <Box sx={{ flex: 1, minWidth: 0 }}>
              <ValueSourceField
                label={name}
                value={source}
                onChange={(next) => next && onChange({ ...value, [name]: next })}
                context={context}
                idPrefix={`${idPrefix}-${name}`}
              />
            </Box>
            <IconButton
              aria-label={t('wf.mapping.remove', { name })}
              onClick={() => onChange(Object.fromEntries(entries.filter(([n]) => n !== name)))}
            >
              <DeleteIcon fontSize="small" />
            </IconButton>
          </Box>
        ))}
        <Box sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
          {free ? (
            <TextField
              select
              size="small"
              label={t('wf.mapping.name')}
              value={free.includes(adding) ? adding : ''}
              onChange={(e) => setAdding(e.target.value)}
              sx={{ flex: 1 }}
              disabled={free.length === 0}
              id={`${idPrefix}-add-name`}
            >
              {free.map((n) => (
                <MenuItem key={n} value={n}>
                  {n}
                </MenuItem>
              ))}
            </TextField>
          ) : (
            <TextField
              size="small"
              label={t('wf.mapping.name')}
              value={adding}
              onChange={(e) => setAdding(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter') {
                  e.preventDefault();
                  add();
                }
              }}
              sx={{ flex: 1 }}
              slotProps={{ htmlInput: { maxLength: 100 } }}
              id={`${idPrefix}-add-name`}
            />
          )}
          <Button size="small" startIcon={<AddIcon />} onClick={add} disabled={!adding.trim()}>
            {t('wf.mapping.add')}
          </Button>
        </Box>
      </Stack>
    </Box>
  );
}
