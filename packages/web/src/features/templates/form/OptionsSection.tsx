import { Box, Checkbox, FormControlLabel, FormGroup, MenuItem, TextField, Typography } from '@mui/material';
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

/** The apps that lock a Terraform state (their template sets how long a run waits for the lock). */
const lockingApps = ['terraform', 'tofu', 'terragrunt'];

/** "Options": alerts, parallel runs, what a task run may override, the runner tag. */
export function OptionsSection({ form, errors, serverError }: SectionProps) {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const field = useFieldProps();
  const app = form.watch('app') || 'ansible';
  const taskParams = (form.watch('task_params') ?? {}) as Record<string, unknown>;
  const setParam = (name: string, value: string) =>
    form.setValue('task_params', { ...taskParams, [name]: value } as Values['task_params'], {
      shouldDirty: true,
    });
  return (
    <Box sx={{ pt: 1 }}>
      <Typography variant="subtitle2" component="h3">
        {t('tpl.options')}
      </Typography>
      <FormGroup>
        <FlagCheckbox form={form} name="suppress_success_alerts" label={t('tpl.suppressSuccessAlerts')} />
        <FlagCheckbox form={form} name="allow_parallel_tasks" label={t('tpl.allowParallel')} />
        <FlagCheckbox form={form} name="allow_override_branch_in_task" label={t('tpl.allowBranch')} />
        {app === 'ansible' &&
          taskParamFlags.map((flag) => (
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
      {lockingApps.includes(app) && (
        <Box sx={{ mt: 2 }}>
          <TextField
            fullWidth
            label={t('tpl.lockTimeout')}
            value={typeof taskParams.lock_timeout === 'string' ? taskParams.lock_timeout : ''}
            onChange={(e) =>
              form.setValue(
                'task_params',
                { ...taskParams, lock_timeout: e.target.value } as Values['task_params'],
                {
                  shouldDirty: true,
                },
              )
            }
            helperText={t('tpl.lockTimeoutHelp')}
            {...field(
              (errors.task_params as Record<string, { message?: string }> | undefined)?.lock_timeout,
              serverError,
              'task_params.lock_timeout',
              'tpl.lockTimeout',
            )}
            slotProps={{ htmlInput: { 'data-field': 'lock_timeout' } }}
          />
          <TextField
            select
            fullWidth
            sx={{ mt: 2 }}
            label={t('tpl.stateBackend')}
            value={taskParams.state_backend === 'builtin' ? 'builtin' : ''}
            onChange={(e) => setParam('state_backend', e.target.value)}
            helperText={t('tpl.stateBackendHelp')}
            slotProps={{ htmlInput: { 'data-field': 'state_backend' } }}
          >
            <MenuItem value="">{t('tpl.stateBackendOwn')}</MenuItem>
            <MenuItem value="builtin">{t('tpl.stateBackendBuiltin')}</MenuItem>
          </TextField>
          {taskParams.state_backend === 'builtin' && (
            <TextField
              fullWidth
              sx={{ mt: 2 }}
              label={t('tpl.stateName')}
              value={typeof taskParams.state_name === 'string' ? taskParams.state_name : ''}
              onChange={(e) => setParam('state_name', e.target.value)}
              helperText={t('tpl.stateNameHelp')}
              {...field(
                (errors.task_params as Record<string, { message?: string }> | undefined)?.state_name,
                serverError,
                'task_params.state_name',
                'tpl.stateName',
              )}
              slotProps={{ htmlInput: { 'data-field': 'state_name' } }}
            />
          )}
        </Box>
      )}
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
