import {
  Autocomplete,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
} from '@mui/material';
import { type Runner, runnerUpdateInput } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormError, useSaveAndClose } from '../../components/forms';
import { translateMessage } from '../../i18n/messages';
import { useUpdateRunner } from './api';

/** Edits a runner's name, tags and how many tasks it runs at once. */
export function RunnerDialog({ runner, onClose }: { runner: Runner; onClose: () => void }) {
  const { t } = useTranslation();
  const update = useUpdateRunner();
  const save = useSaveAndClose(update, onClose);
  const [name, setName] = useState(runner.name);
  const [tags, setTags] = useState<string[]>(runner.tags);
  const [pending, setPending] = useState('');
  const [max, setMax] = useState(String(runner.max_parallel_tasks));
  const [errors, setErrors] = useState<Record<string, string>>({});

  const submit = () => {
    const allTags = pending.trim() ? [...tags, pending] : tags;
    const parsed = runnerUpdateInput.safeParse({
      name,
      tags: allTags,
      max_parallel_tasks: max.trim() === '' ? Number.NaN : Number(max),
    });
    if (!parsed.success) {
      const next: Record<string, string> = {};
      for (const issue of parsed.error.issues) {
        const field = String(issue.path[0] ?? 'name');
        next[field] ??= translateMessage(issue.message, t, field);
      }
      setErrors(next);
      return;
    }
    setErrors({});
    void save({ runner, change: parsed.data }, t('runners.saved', { name: parsed.data.name ?? name }));
  };

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" aria-labelledby="runner-edit-title">
      <DialogTitle id="runner-edit-title">{t('runners.editTitle')}</DialogTitle>
      <DialogContent>
        <FormError error={update.error} />
        <Stack
          component="form"
          id="runner-edit-form"
          noValidate
          spacing={2}
          sx={{ pt: 1 }}
          onSubmit={(e) => {
            e.preventDefault();
            submit();
          }}
        >
          <TextField
            label={t('runners.name')}
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={!!errors.name}
            helperText={errors.name}
            required
            autoFocus
          />
          <Autocomplete
            multiple
            freeSolo
            options={[]}
            value={tags}
            inputValue={pending}
            onInputChange={(_e, value) => setPending(value)}
            onChange={(_e, value) => setTags(value.map((v) => v.trim()).filter(Boolean))}
            renderValue={(value, getItemProps) =>
              value.map((tag, index) => {
                const { key, ...props } = getItemProps({ index });
                return <Chip key={key} size="small" label={tag} {...props} />;
              })
            }
            renderInput={(params) => (
              <TextField
                {...params}
                label={t('runners.tags')}
                name="tags"
                error={!!errors.tags}
                helperText={errors.tags ?? t('runners.tagsHelp')}
              />
            )}
          />
          <TextField
            label={t('runners.maxParallel')}
            name="max_parallel_tasks"
            type="number"
            value={max}
            onChange={(e) => setMax(e.target.value)}
            error={!!errors.max_parallel_tasks}
            helperText={errors.max_parallel_tasks ?? t('runners.maxParallelHelp')}
            slotProps={{ htmlInput: { min: 1, max: 1000 } }}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button type="submit" form="runner-edit-form" variant="contained" disabled={update.isPending}>
          {t('common.save')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
