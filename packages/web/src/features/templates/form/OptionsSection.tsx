import {
  Box,
  Checkbox,
  FormControlLabel,
  FormGroup,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { DEFAULT_PLAN_TTL_HOURS, PLAN_TTL_HOURS_MAX } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useFieldProps } from '../../../components/messages';
import { useProjectContext } from '../../../components/project-context';
import { RunnerTagField } from '../../runners';
import { FlagCheckbox } from './fields';
import type { SectionProps, Values } from './values';

/** The Ansible run options a task may override, kept in `task_params`. */
const taskParamFlags = [
  'allow_override_inventory',
  'allow_override_limit',
  'allow_override_tags',
  'allow_override_skip_tags',
  'allow_debug',
] as const;

/** What a task run may override whatever the app: the environment. */
const allAppFlags = ['allow_override_environment'] as const;

/** The apps that lock a Terraform state (their template sets how long a run waits for the lock). */
const lockingApps = ['terraform', 'tofu', 'terragrunt'];

/** "Options": alerts, parallel runs, what a task run may override, the runner tag. */
export function OptionsSection({ form, errors, serverError }: SectionProps) {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const field = useFieldProps();
  const app = form.watch('app') || 'ansible';
  const taskParams = (form.watch('task_params') ?? {}) as Record<string, unknown>;
  return (
    <Box sx={{ pt: 1 }}>
      <Typography variant="subtitle2" component="h3">
        {t('tpl.options')}
      </Typography>
      <FormGroup>
        <FlagCheckbox form={form} name="suppress_success_alerts" label={t('tpl.suppressSuccessAlerts')} />
        <FlagCheckbox form={form} name="allow_parallel_tasks" label={t('tpl.allowParallel')} />
        <FlagCheckbox form={form} name="allow_override_branch_in_task" label={t('tpl.allowBranch')} />
        {[...(app === 'ansible' ? taskParamFlags : []), ...allAppFlags].map((flag) => (
          <FormControlLabel
            key={flag}
            label={t(`tpl.params.${flag}`)}
            control={
              <Checkbox
                checked={!!taskParams[flag]}
                onChange={(e) =>
                  form.setValue('task_params', {
                    ...taskParams,
                    [flag]: e.target.checked,
                  } as Values['task_params'])
                }
              />
            }
          />
        ))}
      </FormGroup>
      {lockingApps.includes(app) && <TerraformOptions {...{ form, errors, serverError }} />}
      <Box sx={{ mt: 2 }}>
        <RunnerTagField
          projectId={project.id}
          value={form.watch('runner_tag')}
          onChange={(v) => form.setValue('runner_tag', v, { shouldDirty: true })}
          {...field(errors.runner_tag, serverError, 'runner_tag')}
        />
      </Box>
    </Box>
  );
}

/** A list of patterns edited one per line. */
const linesOf = (text: string) => text.split('\n').map((line) => line.trim());
const textOf = (value: unknown) => (Array.isArray(value) ? value.join('\n') : '');

/**
 * Terraform, OpenTofu and Terragrunt: how long a run waits for the state lock, how long a plan-only task's plan may
 * be applied later, whether its approver must be someone else than who started it, and drift checks (their cron
 * schedule and ignore rules).
 */
function TerraformOptions({
  form,
  errors,
  serverError,
}: Pick<SectionProps, 'form' | 'errors' | 'serverError'>) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const taskParams = (form.watch('task_params') ?? {}) as Record<string, unknown>;
  const set = (key: string, value: unknown) => {
    const next = { ...taskParams, [key]: value };
    if (value === undefined) delete next[key];
    form.setValue('task_params', next as Values['task_params'], { shouldDirty: true });
  };
  const paramError = (key: string) =>
    (errors.task_params as Record<string, { message?: string }> | undefined)?.[key];
  const drift = !!taskParams.drift_check;
  return (
    <Stack spacing={2} sx={{ mt: 2 }}>
      <TextField
        fullWidth
        label={t('tpl.lockTimeout')}
        value={typeof taskParams.lock_timeout === 'string' ? taskParams.lock_timeout : ''}
        onChange={(e) => set('lock_timeout', e.target.value)}
        helperText={t('tpl.lockTimeoutHelp')}
        {...field(paramError('lock_timeout'), serverError, 'task_params.lock_timeout', 'tpl.lockTimeout')}
        slotProps={{ htmlInput: { 'data-field': 'lock_timeout' } }}
      />
      <TextField
        select
        fullWidth
        label={t('tpl.stateBackend')}
        value={taskParams.state_backend === 'builtin' ? 'builtin' : ''}
        onChange={(e) => set('state_backend', e.target.value)}
        helperText={t('tpl.stateBackendHelp')}
        slotProps={{ htmlInput: { 'data-field': 'state_backend' } }}
      >
        <MenuItem value="">{t('tpl.stateBackendOwn')}</MenuItem>
        <MenuItem value="builtin">{t('tpl.stateBackendBuiltin')}</MenuItem>
      </TextField>
      {taskParams.state_backend === 'builtin' && (
        <TextField
          fullWidth
          label={t('tpl.stateName')}
          value={typeof taskParams.state_name === 'string' ? taskParams.state_name : ''}
          onChange={(e) => set('state_name', e.target.value)}
          helperText={t('tpl.stateNameHelp')}
          {...field(paramError('state_name'), serverError, 'task_params.state_name', 'tpl.stateName')}
          slotProps={{ htmlInput: { 'data-field': 'state_name' } }}
        />
      )}
      <TextField
        fullWidth
        type="number"
        label={t('tpl.planTtl')}
        value={typeof taskParams.plan_ttl_hours === 'number' ? taskParams.plan_ttl_hours : ''}
        onChange={(e) => set('plan_ttl_hours', e.target.value === '' ? undefined : Number(e.target.value))}
        helperText={t('tpl.planTtlHelp', { hours: DEFAULT_PLAN_TTL_HOURS })}
        {...field(paramError('plan_ttl_hours'), serverError, 'task_params.plan_ttl_hours', 'tpl.planTtl')}
        slotProps={{
          htmlInput: { 'data-field': 'plan_ttl_hours', min: 1, max: PLAN_TTL_HOURS_MAX, step: 1 },
        }}
      />
      <FormGroup>
        <FormControlLabel
          label={t('tpl.approverMustDiffer')}
          control={
            <Checkbox
              checked={!!taskParams.approver_must_differ}
              onChange={(e) => set('approver_must_differ', e.target.checked)}
              slotProps={{ input: { 'data-field': 'approver_must_differ' } as object }}
            />
          }
        />
        <FormControlLabel
          label={t('tpl.driftCheck')}
          control={
            <Checkbox
              checked={drift}
              onChange={(e) => set('drift_check', e.target.checked)}
              slotProps={{ input: { 'data-field': 'drift_check' } as object }}
            />
          }
        />
      </FormGroup>
      {drift && (
        <>
          <TextField
            fullWidth
            label={t('tpl.driftCron')}
            value={typeof taskParams.drift_cron === 'string' ? taskParams.drift_cron : ''}
            onChange={(e) => set('drift_cron', e.target.value)}
            placeholder="0 */6 * * *"
            helperText={t('tpl.driftCronHelp')}
            {...field(paramError('drift_cron'), serverError, 'task_params.drift_cron', 'tpl.driftCron')}
            slotProps={{
              htmlInput: {
                'data-field': 'drift_cron',
                spellCheck: false,
                style: { fontFamily: 'monospace' },
              },
            }}
          />
          {(
            [
              ['drift_ignore_addresses', 'tpl.driftIgnoreAddresses'],
              ['drift_ignore_attributes', 'tpl.driftIgnoreAttributes'],
            ] as const
          ).map(([key, label]) => (
            // Ignore rules: one pattern a line, kept as a list.
            <TextField
              key={key}
              fullWidth
              multiline
              minRows={2}
              label={t(label)}
              value={textOf(taskParams[key])}
              onChange={(e) => set(key, linesOf(e.target.value))}
              onBlur={(e) => set(key, linesOf(e.target.value).filter(Boolean))}
              helperText={t(`${label}Help`)}
              {...field(paramError(key), serverError, `task_params.${key}`, label)}
              slotProps={{
                htmlInput: { 'data-field': key, spellCheck: false, style: { fontFamily: 'monospace' } },
              }}
            />
          ))}
        </>
      )}
    </Stack>
  );
}
