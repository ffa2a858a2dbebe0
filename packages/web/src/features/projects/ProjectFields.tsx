import { Alert, Stack, TextField, Typography } from '@mui/material';
import type { UseFormReturn } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useInfo } from '../../api/session';
import { CheckboxField, useFieldError } from '../../components/forms';
import type { ProjectValues } from './api';

/** Name, alert, alert chat and max parallel tasks; on the settings page also task retention. */
export function ProjectFields({
  form,
  serverError,
  retention = false,
}: {
  form: UseFormReturn<ProjectValues>;
  serverError?: unknown;
  /** Show "Keep tasks for (days)" (the settings page). */
  retention?: boolean;
}) {
  const { t } = useTranslation();
  const fieldError = useFieldError();
  const { register, formState, control } = form;
  const e = formState.errors;
  const info = useInfo().data;
  const serverDays = info?.task_retention_days;
  const channels = info?.alert_channels;
  const retentionHelp = [
    t('retention.keepDaysHelp'),
    serverDays === undefined
      ? ''
      : serverDays > 0
        ? t('retention.serverDefaultDays', { days: serverDays })
        : t('retention.serverDefaultForever'),
  ]
    .filter(Boolean)
    .join(' ');
  return (
    <Stack spacing={2}>
      <TextField
        label={t('fields.name')}
        required
        {...register('name')}
        {...fieldError(e.name, serverError, 'name')}
      />
      <TextField
        label={t('fields.maxParallelTasks')}
        type="number"
        slotProps={{ htmlInput: { min: 0, step: 1 } }}
        {...register('max_parallel_tasks', { setValueAs: (v) => (v === '' || v === null ? 0 : Number(v)) })}
        {...(fieldError(e.max_parallel_tasks, serverError, 'max_parallel_tasks').helperText
          ? fieldError(e.max_parallel_tasks, serverError, 'max_parallel_tasks')
          : { helperText: t('projects.maxParallelHelp') })}
      />
      {retention && (
        <TextField
          label={t('retention.keepDays')}
          type="number"
          slotProps={{ htmlInput: { min: 0, step: 1 } }}
          {...register('task_retention_days', {
            setValueAs: (v) => (v === '' || v === null ? 0 : Number(v)),
          })}
          {...(fieldError(e.task_retention_days, serverError, 'task_retention_days').helperText
            ? fieldError(e.task_retention_days, serverError, 'task_retention_days')
            : { helperText: retentionHelp })}
        />
      )}
      {retention && (
        <Stack spacing={0}>
          <CheckboxField
            control={control}
            name="agent_runs_need_approval"
            label={t('approvals.projectSetting')}
          />
          <Typography variant="body2" color="text.secondary">
            {t('approvals.projectSettingHelp')}
          </Typography>
        </Stack>
      )}
      <CheckboxField control={control} name="alert" label={t('projects.alertLabel')} />
      {channels &&
        (channels.length > 0 ? (
          <Typography variant="body2" color="text.secondary" data-alert-channels>
            {t('projects.alertChannels', {
              channels: channels.map((c) => t(`projects.channels.${c}`, { defaultValue: c })).join(', '),
            })}
          </Typography>
        ) : (
          <Alert severity="warning" data-alert-channels>
            {t('projects.noAlertChannels')}
          </Alert>
        ))}
      <TextField
        label={t('fields.alertChat')}
        {...register('alert_chat')}
        {...(fieldError(e.alert_chat, serverError, 'alert_chat').helperText
          ? fieldError(e.alert_chat, serverError, 'alert_chat')
          : { helperText: t('projects.alertChatHelp') })}
      />
    </Stack>
  );
}
