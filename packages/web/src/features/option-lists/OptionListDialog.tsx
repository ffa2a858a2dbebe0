import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import { Alert, Box, Button, IconButton, Stack, TextField, Typography } from '@mui/material';
import { type OptionList, type OptionListEntry, optionListInput } from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useResourceSave } from '../../api/resources';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { translateResourceMessage, useFieldProps } from '../../components/messages';

/** An option list: its name and its entries (a label shown, a value answered), in order. */
export function OptionListDialog({
  projectId,
  item,
  readOnly,
  onClose,
}: {
  projectId: number;
  item: OptionList | null;
  readOnly?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'option_lists');
  const saveAndClose = useSaveAndClose(save, onClose);
  const fieldProps = useFieldProps();
  const [name, setName] = useState(item?.name ?? '');
  const [entries, setEntries] = useState<OptionListEntry[]>(
    item?.options.map((o) => ({ ...o })) ?? [{ name: '', value: '' }],
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const setEntry = (index: number, patch: Partial<OptionListEntry>) => {
    setEntries((old) => old.map((e, i) => (i === index ? { ...e, ...patch } : e)));
    setErrors({});
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const parsed = optionListInput.safeParse({ id: item?.id ?? null, name, options: entries });
    if (!parsed.success) {
      const next: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        const key = issue.path.map(String).join('.') || 'options';
        next[key] ??= translateResourceMessage(issue.message, t, String(issue.path.at(-1) ?? 'options'));
      }
      setErrors(next);
      return;
    }
    setErrors({});
    await saveAndClose(
      { ...parsed.data, id: item?.id ?? null },
      t(item ? 'optionLists.saved' : 'optionLists.created', { name: parsed.data.name }),
    );
  };
  const optionsError = errors.options ?? fieldProps(undefined, save.error, 'options').helperText;

  return (
    <FormDialog
      open
      formId="option-list-form"
      title={item ? t('optionLists.edit') : t('optionLists.new')}
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
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            setErrors({});
          }}
          slotProps={{ htmlInput: { maxLength: 100 } }}
          {...(errors.name
            ? { error: true, helperText: errors.name }
            : fieldProps(undefined, save.error, 'name'))}
        />
        <Box>
          <Typography variant="subtitle2" component="h3" color={optionsError ? 'error' : undefined}>
            {t('optionLists.entries')}
          </Typography>
          {optionsError && (
            <Typography variant="caption" color="error" role="alert" component="p">
              {optionsError}
            </Typography>
          )}
          {entries.length === 0 && (
            <Typography variant="body2" color="text.secondary" sx={{ py: 1 }}>
              {t('optionLists.noEntries')}
            </Typography>
          )}
          <Stack spacing={1} sx={{ mt: 1 }}>
            {entries.map((entry, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: entries are edited in place
              <Box key={index} sx={{ display: 'flex', gap: 1, alignItems: 'flex-start' }}>
                <TextField
                  size="small"
                  label={t('optionLists.label')}
                  disabled={readOnly}
                  value={entry.name}
                  onChange={(e) => setEntry(index, { name: e.target.value })}
                  sx={{ flex: 1, minWidth: 0 }}
                  slotProps={{ htmlInput: { 'aria-label': t('optionLists.labelOf', { n: index + 1 }) } }}
                  {...(errors[`options.${index}.name`]
                    ? { error: true, helperText: errors[`options.${index}.name`] }
                    : {})}
                />
                <TextField
                  size="small"
                  label={t('optionLists.value')}
                  disabled={readOnly}
                  value={entry.value}
                  onChange={(e) => setEntry(index, { value: e.target.value })}
                  sx={{ flex: 1, minWidth: 0 }}
                  slotProps={{ htmlInput: { 'aria-label': t('optionLists.valueOf', { n: index + 1 }) } }}
                  {...(errors[`options.${index}.value`]
                    ? { error: true, helperText: errors[`options.${index}.value`] }
                    : {})}
                />
                {!readOnly && (
                  <IconButton
                    aria-label={t('optionLists.removeEntry', { n: index + 1 })}
                    onClick={() => setEntries((old) => old.filter((_, i) => i !== index))}
                  >
                    <DeleteIcon fontSize="small" />
                  </IconButton>
                )}
              </Box>
            ))}
          </Stack>
          {!readOnly && (
            <Button
              size="small"
              startIcon={<AddIcon />}
              onClick={() => setEntries((old) => [...old, { name: '', value: '' }])}
              sx={{ mt: 1 }}
            >
              {t('optionLists.addEntry')}
            </Button>
          )}
        </Box>
      </Stack>
    </FormDialog>
  );
}
