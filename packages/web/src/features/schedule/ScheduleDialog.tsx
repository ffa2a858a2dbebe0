import { zodResolver } from '@hookform/resolvers/zod';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  Box,
  Checkbox,
  FormControlLabel,
  FormLabel,
  MenuItem,
  Radio,
  RadioGroup,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { DEFAULT_CRON, type Schedule, scheduleInput, type Template } from '@signalbox/contracts';
import { Cron } from 'croner';
import { useMemo, useState } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { ApiError, api } from '../../api/client';
import { useResourceList, useResourceSave } from '../../api/resources';
import { FormDialog } from '../../components/FormDialog';
import { formatDateTime } from '../../components/format';
import { useSaveAndClose } from '../../components/forms';
import { translateResourceMessage, useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { playbookHint, usePickLabels } from '../../components/pick-labels';
import { idOptions, SelectField } from '../../components/SelectField';
import { browserTimeZone, fromLocalInput, nextWholeHour, toLocalInput } from './run-at';
import { fromCron, groupsFor, ranges, type Timing, type TimingState, timings, toCron } from './timing';

type Values = z.input<typeof scheduleInput>;

const nextRun = (cron: string): Date | null => {
  try {
    return new Cron(cron, { paused: true }).nextRun();
  } catch {
    return null;
  }
};

/**
 * New/edit schedule: template, then either a cron (validated by the server, with a next-run preview and the
 * timing selector) or one date and time, picked in the browser's time zone and sent as UTC.
 */
export function ScheduleDialog({
  projectId,
  item,
  onClose,
}: {
  projectId: number;
  item: Schedule | null;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const labelled = usePickLabels();
  const templates = useResourceList<Template>(projectId, 'templates');
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'schedules', [
    'templates',
  ]);
  const field = useFieldProps();
  const [cronError, setCronError] = useState('');
  const [runAtError, setRunAtError] = useState('');
  const { register, handleSubmit, control, watch, setValue, formState } = useForm<Values>({
    resolver: zodResolver(scheduleInput),
    defaultValues: {
      template_id: item?.template_id ?? (0 as number),
      type: item?.type ?? '',
      cron_format: item?.cron_format || DEFAULT_CRON,
      run_at: item?.run_at ?? nextWholeHour(),
      delete_after_run: item?.delete_after_run ?? false,
      repository_id: item?.repository_id ?? null,
      name: item?.name ?? '',
      active: item?.active ?? true,
    },
  });
  const once = watch('type') === 'run_at';
  const runAt = watch('run_at');
  const cron = watch('cron_format') ?? '';
  const next = useMemo(() => nextRun(cron.trim()), [cron]);
  // The panel is a second view of the cron field: it is read from the cron on every change, and a cron it cannot
  // show exactly is said so rather than shown as something else.
  const timing = useMemo(() => fromCron(cron), [cron]);
  const errors = formState.errors;

  const applyTiming = (nextTiming: TimingState) => {
    setCronError('');
    setValue('cron_format', toCron(nextTiming), { shouldValidate: formState.isSubmitted, shouldDirty: true });
  };
  const pickTiming = (value: Timing) =>
    applyTiming(
      timing
        ? { ...timing, timing: value }
        : { timing: value, minutes: [], hours: [], days: [], months: [], weekdays: [] },
    );
  const toggleValue = (state: TimingState, group: keyof typeof ranges, value: number, on: boolean) =>
    applyTiming({
      ...state,
      [group]: on ? [...state[group], value] : state[group].filter((v) => v !== value),
    });

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit(async (values) => {
    setCronError('');
    setRunAtError('');
    if (values.type === 'run_at') {
      // Saving it active arms it: its time must still be ahead (the server checks the same).
      if (values.active !== false && values.run_at && new Date(values.run_at).getTime() <= Date.now()) {
        setRunAtError(t('schedule.runAtPast'));
        return;
      }
    } else {
      try {
        await api(`/project/${projectId}/schedules/validate`, {
          method: 'POST',
          body: { cron_format: values.cron_format },
        });
      } catch (err) {
        setCronError(err instanceof ApiError ? err.message : String(err));
        return;
      }
    }
    const name = templates.data?.find((x) => x.id === values.template_id)?.name ?? '';
    // A run-once schedule is saved active again: picking a new time re-arms one that ran or was missed.
    const body = values.type === 'run_at' ? { ...values, active: true } : values;
    // The dialog does not edit task parameters (set through the API): an edit keeps them.
    await saveAndClose(
      { ...body, id: item?.id ?? null, ...(item ? { task_params: item.task_params } : {}) },
      t(item ? 'schedule.saved' : 'schedule.created', { name }),
    );
  });

  const cronProps = cronError
    ? { error: true, helperText: translateResourceMessage(cronError, t, 'cron_format') }
    : field(errors.cron_format, save.error, 'cron_format');
  const runAtProps = runAtError
    ? { error: true, helperText: runAtError }
    : field(errors.run_at, save.error, 'run_at');
  const zone = browserTimeZone();

  return (
    <FormDialog
      open
      formId="schedule-form"
      title={item ? t('schedule.edit') : t('schedule.new')}
      error={save.error}
      pending={save.isPending}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        <SelectField
          control={control}
          name="template_id"
          label={t('res.template')}
          options={idOptions(labelled(templates.data ?? [], playbookHint))}
          required
          autoFocus
          serverError={save.error}
        />
        <TextField
          label={t('res.name')}
          helperText={t('schedule.nameHelp')}
          slotProps={{ htmlInput: { maxLength: 100 } }}
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        <Controller
          control={control}
          name="type"
          render={({ field: f }) => (
            <RadioGroup
              row
              aria-label={t('schedule.kind')}
              value={f.value ?? ''}
              onChange={(e) => f.onChange(e.target.value)}
            >
              <FormControlLabel value="" control={<Radio />} label={t('schedule.types.cron')} />
              <FormControlLabel value="run_at" control={<Radio />} label={t('schedule.types.run_at')} />
            </RadioGroup>
          )}
        />
        {once ? (
          <>
            <Controller
              control={control}
              name="run_at"
              render={({ field: f }) => (
                <TextField
                  type="datetime-local"
                  label={t('schedule.runAt')}
                  required
                  value={toLocalInput(f.value)}
                  onChange={(e) => {
                    setRunAtError('');
                    f.onChange(fromLocalInput(e.target.value));
                  }}
                  onBlur={f.onBlur}
                  name={f.name}
                  slotProps={{
                    inputLabel: { shrink: true },
                    htmlInput: { min: toLocalInput(new Date().toISOString()), step: 60 },
                  }}
                  {...runAtProps}
                  helperText={runAtProps.helperText ?? t('schedule.runAtZone', { zone })}
                />
              )}
            />
            <Typography variant="body2" color="text.secondary" aria-live="polite" data-testid="run-at">
              {runAt ? t('schedule.runsOnce', { time: formatDateTime(runAt) }) : t('schedule.noRunAt')}
            </Typography>
            <Controller
              control={control}
              name="delete_after_run"
              render={({ field: f }) => (
                <FormControlLabel
                  label={t('schedule.deleteAfterRun')}
                  control={<Checkbox checked={!!f.value} onChange={(e) => f.onChange(e.target.checked)} />}
                />
              )}
            />
          </>
        ) : (
          <>
            <TextField
              label={t('schedule.cron')}
              required
              placeholder="0 0 * * *"
              slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace' } } }}
              {...mui(register('cron_format', { onChange: () => setCronError('') }))}
              {...cronProps}
            />
            <Typography variant="body2" color="text.secondary" aria-live="polite" data-testid="next-run">
              {next
                ? t('schedule.nextRun', { time: formatDateTime(next.toISOString()) })
                : t('schedule.noNextRun')}
            </Typography>
            <Accordion variant="outlined" disableGutters>
              <AccordionSummary expandIcon={<ExpandMoreIcon />}>
                <Typography>{t('schedule.timing')}</Typography>
              </AccordionSummary>
              <AccordionDetails>
                <TextField
                  select
                  fullWidth
                  size="small"
                  label={t('schedule.timing')}
                  value={timing?.timing ?? ''}
                  onChange={(e) => pickTiming(e.target.value as Timing)}
                  sx={{ mb: 2 }}
                  helperText={timing ? undefined : t('forms.schedule.notExpressible')}
                  slotProps={{ formHelperText: { 'aria-live': 'polite' } as object }}
                >
                  {timings.map((x) => (
                    <MenuItem key={x} value={x}>
                      {t(`schedule.timings.${x}`)}
                    </MenuItem>
                  ))}
                </TextField>
                {timing
                  ? groupsFor[timing.timing].map((group) => (
                      <Box key={group} component="fieldset" sx={{ border: 0, p: 0, m: 0, mb: 1.5 }}>
                        <FormLabel component="legend" sx={{ fontSize: 14, mb: 0.5 }}>
                          {t(`schedule.groups.${group}`)}
                        </FormLabel>
                        <Box
                          data-testid={`timing-${group}`}
                          sx={{
                            display: 'grid',
                            // Equal columns, so values line up under each other whatever their label width.
                            gridTemplateColumns: `repeat(auto-fill, minmax(${group === 'weekdays' || group === 'months' ? 76 : 60}px, 1fr))`,
                            columnGap: 0.5,
                          }}
                        >
                          {ranges[group].map((value) => (
                            <FormControlLabel
                              key={value}
                              sx={{ m: 0, minWidth: 0, '& .MuiFormControlLabel-label': { fontSize: 14 } }}
                              label={
                                group === 'weekdays'
                                  ? t(`schedule.weekdays.${value}`)
                                  : group === 'months'
                                    ? t(`schedule.months.${value}`)
                                    : String(value)
                              }
                              control={
                                <Checkbox
                                  size="small"
                                  checked={timing[group].includes(value)}
                                  onChange={(e) => toggleValue(timing, group, value, e.target.checked)}
                                />
                              }
                            />
                          ))}
                        </Box>
                      </Box>
                    ))
                  : null}
              </AccordionDetails>
            </Accordion>
          </>
        )}
      </Stack>
    </FormDialog>
  );
}
