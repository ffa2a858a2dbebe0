import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Box,
  Button,
  Checkbox,
  Chip,
  FormControlLabel,
  IconButton,
  List,
  ListItem,
  ListItemText,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { emptySurveyVar, type SurveyVar, surveyVarSchema } from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormDialog } from '../../components/FormDialog';
import { translateResourceMessage } from '../../components/messages';

const types = ['string', 'int', 'secret', 'enum'] as const;

/** The survey variables of a template: a list with add, edit and remove. */
export function SurveyEditor({
  value,
  onChange,
}: {
  value: SurveyVar[];
  onChange: (v: SurveyVar[]) => void;
}) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState<{ index: number; item: SurveyVar } | null>(null);
  return (
    <Box>
      <Typography variant="subtitle2" component="h3">
        {t('survey.title')}
      </Typography>
      {value.length === 0 ? (
        <Typography variant="body2" color="text.secondary" sx={{ py: 1 }}>
          {t('survey.empty')}
        </Typography>
      ) : (
        <List dense>
          {value.map((v, index) => (
            <ListItem
              key={v.name}
              disableGutters
              secondaryAction={
                <>
                  <IconButton
                    aria-label={t('res.editNamed', { name: v.name })}
                    onClick={() => setEditing({ index, item: v })}
                  >
                    <EditIcon fontSize="small" />
                  </IconButton>
                  <IconButton
                    aria-label={t('res.deleteNamed', { name: v.name })}
                    onClick={() => onChange(value.filter((_, i) => i !== index))}
                  >
                    <DeleteIcon fontSize="small" />
                  </IconButton>
                </>
              }
            >
              <ListItemText
                primary={
                  <>
                    {v.title} <code>{v.name}</code>{' '}
                    <Chip size="small" label={t(`survey.types.${v.type || 'string'}`)} />
                    {v.required && (
                      <Chip
                        size="small"
                        color="warning"
                        variant="outlined"
                        label={t('survey.required')}
                        sx={{ ml: 0.5 }}
                      />
                    )}
                  </>
                }
                secondary={v.description || undefined}
                sx={{ pr: 10, wordBreak: 'break-word' }}
              />
            </ListItem>
          ))}
        </List>
      )}
      <Button
        size="small"
        startIcon={<AddIcon />}
        onClick={() =>
          setEditing({
            index: -1,
            item: { ...emptySurveyVar },
          })
        }
      >
        {t('survey.add')}
      </Button>
      {editing && (
        <SurveyVarDialog
          item={editing.item}
          onClose={() => setEditing(null)}
          onSave={(item) => {
            onChange(
              editing.index < 0 ? [...value, item] : value.map((v, i) => (i === editing.index ? item : v)),
            );
            setEditing(null);
          }}
        />
      )}
    </Box>
  );
}

function SurveyVarDialog({
  item,
  onSave,
  onClose,
}: {
  item: SurveyVar;
  onSave: (v: SurveyVar) => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const [v, setV] = useState<SurveyVar>({ ...item, type: item.type || 'string', values: [...item.values] });
  const [errors, setErrors] = useState<Record<string, string>>({});
  /**
   * Changes fields; their messages go (a changed type or list of values may answer the values' message, say "must
   * have values" after values were added): the next Save checks again.
   */
  const set = (patch: Partial<SurveyVar>) => {
    setV((old) => ({ ...old, ...patch }));
    setErrors((old) => {
      const keys = Object.keys(patch);
      if (!keys.some((k) => k in old || k === 'type')) return old;
      const next = { ...old };
      for (const k of keys) delete next[k];
      if (keys.includes('type')) delete next.values;
      return next;
    });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    e.stopPropagation();
    const parsed = surveyVarSchema.safeParse(v);
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
          label={t('res.description')}
          value={v.description}
          onChange={(e) => set({ description: e.target.value })}
        />
        <TextField
          select
          label={t('res.type')}
          value={v.type}
          onChange={(e) => set({ type: e.target.value as SurveyVar['type'] })}
        >
          {types.map((ty) => (
            <MenuItem key={ty} value={ty}>
              {t(`survey.types.${ty}`)}
            </MenuItem>
          ))}
        </TextField>
        <TextField
          label={t('survey.defaultValue')}
          value={v.default_value}
          onChange={(e) => set({ default_value: e.target.value })}
          type={v.type === 'secret' ? 'password' : 'text'}
        />
        <FormControlLabel
          label={t('survey.required')}
          control={<Checkbox checked={v.required} onChange={(e) => set({ required: e.target.checked })} />}
        />
        {v.type === 'enum' && (
          <Box>
            <Typography variant="subtitle2" component="h4" color={errors.values ? 'error' : undefined}>
              {t('survey.values')}
            </Typography>
            {errors.values && (
              <Typography variant="caption" color="error" role="alert">
                {errors.values}
              </Typography>
            )}
            <Stack spacing={1} sx={{ mt: 1 }}>
              {v.values.map((row, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: value rows are edited in place
                <Box key={index} sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
                  <TextField
                    size="small"
                    label={t('survey.valueName')}
                    value={row.name}
                    onChange={(e) =>
                      set({
                        values: v.values.map((r, i) => (i === index ? { ...r, name: e.target.value } : r)),
                      })
                    }
                    sx={{ flex: 1 }}
                  />
                  <TextField
                    size="small"
                    label={t('survey.valueValue')}
                    value={row.value}
                    onChange={(e) =>
                      set({
                        values: v.values.map((r, i) => (i === index ? { ...r, value: e.target.value } : r)),
                      })
                    }
                    sx={{ flex: 1 }}
                  />
                  <IconButton
                    aria-label={t('survey.removeValue')}
                    onClick={() => set({ values: v.values.filter((_, i) => i !== index) })}
                  >
                    <DeleteIcon fontSize="small" />
                  </IconButton>
                </Box>
              ))}
            </Stack>
            <Button
              size="small"
              startIcon={<AddIcon />}
              onClick={() => set({ values: [...v.values, { name: '', value: '' }] })}
            >
              {t('survey.addValue')}
            </Button>
          </Box>
        )}
      </Stack>
    </FormDialog>
  );
}
