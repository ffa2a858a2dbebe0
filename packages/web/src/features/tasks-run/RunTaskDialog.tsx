import {
  Alert,
  Checkbox,
  CircularProgress,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormLabel,
  MenuItem,
  Radio,
  RadioGroup,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import type { Environment, Inventory, Template } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate } from 'react-router';
import { ApiError, api } from '../../api/client';
import { useResourceList } from '../../api/resources';
import { CodeEditor } from '../../components/CodeEditor';
import { FormDialog } from '../../components/FormDialog';
import { translateResourceMessage } from '../../components/messages';
import { ErrorAlert } from '../../components/ui';
import { serverFieldText } from '../../i18n/messages';
import { type Answer, initialAnswers, SurveyFields, useSurveySchema } from '../surveys';
import { type Task, taskKeys } from '../tasks';
import { rerunLabelKey, runLabelKey, templateKeys } from '../templates';
import { type EarlierTask, newRunValues, type RunValues, rerunValues, validateRun } from './validate-run';

const appOptions: Record<string, ('debug' | 'dry_run' | 'diff')[]> = {
  ansible: ['debug', 'dry_run', 'diff'],
  terraform: ['dry_run'],
  tofu: ['dry_run'],
  terragrunt: ['dry_run'],
};

/**
 * The new-task dialog: message, build version, survey variables, options and overrides. With `rerunOf` it starts
 * from that earlier task's answers (secret survey answers are not kept, so they are asked again) and offers its
 * commit or the branch head.
 */
export function RunTaskDialog({
  template,
  rerunOf,
  onClose,
}: {
  template: Template;
  rerunOf?: EarlierTask;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const location = useLocation();
  const client = useQueryClient();
  const params = template.task_params ?? {};
  const inventories = useResourceList<Inventory>(
    template.project_id,
    'inventory',
    !!params.allow_override_inventory,
  );
  const environments = useResourceList<Environment>(
    template.project_id,
    'environment',
    !!params.allow_override_environment,
  );
  const builds = useQuery({
    queryKey: ['project', template.project_id, 'templates', 'builds', template.build_template_id],
    queryFn: () =>
      api<Task[]>(
        `/project/${template.project_id}/templates/${template.build_template_id}/tasks?status=success`,
      ),
    enabled: template.type === 'deploy' && !!template.build_template_id,
  });
  const [values, setValues] = useState<RunValues>(() =>
    rerunOf ? rerunValues(template, rerunOf) : newRunValues(template),
  );
  const action = t(rerunOf ? rerunLabelKey(template.type) : runLabelKey(template.type));
  const hasSecrets = template.survey_vars.some((v) => v.type === 'secret');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const schema = useSurveySchema(template.project_id, template.id, template.survey_vars.length > 0);
  const fields = schema.data ?? [];
  // The answers start from the defaults (or the earlier task's answers) once the survey's schema is here.
  useEffect(() => {
    if (schema.data) setValues((v) => ({ ...v, survey: initialAnswers(schema.data, v.earlierSurvey) }));
  }, [schema.data]);
  /** The server's word on each survey answer of the last refused run, until the answer changes. */
  const [surveyErrors, setSurveyErrors] = useState<Record<string, string>>({});
  const set = (patch: Partial<RunValues>) => setValues((v) => ({ ...v, ...patch }));
  const setSurvey = (name: string, value: Answer) => {
    setValues((v) => ({ ...v, survey: { ...v.survey, [name]: value } }));
    setSurveyErrors((old) => {
      if (!(name in old)) return old;
      const { [name]: _, ...rest } = old;
      return rest;
    });
  };

  const run = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<Task>(`/project/${template.project_id}/tasks`, { method: 'POST', body }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: templateKeys.all(template.project_id) });
      void client.invalidateQueries({ queryKey: taskKeys.history(template.project_id) });
    },
  });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (template.survey_vars.length > 0 && !schema.data) return;
    const result = validateRun(template, values, fields);
    setErrors(result.errors);
    if (!result.body) return;
    try {
      const task = await run.mutateAsync(result.body);
      onClose();
      const search = new URLSearchParams(location.search);
      search.set('t', String(task.id));
      navigate(`${location.pathname}?${search}`);
    } catch (err) {
      // Shown in the dialog: the general message above, each answer's at its field.
      const next: Record<string, string> = {};
      for (const f of fields) {
        const text = serverFieldText(err, `survey.${f.name}`, t, f.title);
        if (text) next[f.name] = text;
      }
      setSurveyErrors(next);
    }
  };

  // A run refused only for survey answers says so at each of those fields, not again above the form.
  const refusedKeys = run.error instanceof ApiError ? Object.keys(run.error.body?.field_errors ?? {}) : [];
  const onlyAtFields =
    refusedKeys.length > 0 && refusedKeys.every((k) => fields.some((f) => `survey.${f.name}` === k));
  const err = (name: string) =>
    errors[name] ? { error: true, helperText: translateResourceMessage(errors[name], t, name) } : {};
  const options = appOptions[template.app] ?? [];

  return (
    <FormDialog
      open
      formId="run-task-form"
      title={t('run.dialogTitle', { action, name: template.name })}
      error={onlyAtFields ? undefined : run.error}
      // No run before the survey is known: while it loads, and when it could not be had (its error is shown).
      pending={run.isPending || (template.survey_vars.length > 0 && !schema.data)}
      submitLabel={action}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        {template.description && (
          <Typography variant="body2" color="text.secondary" sx={{ whiteSpace: 'pre-wrap' }}>
            {template.description}
          </Typography>
        )}
        <TextField
          label={t('run.message')}
          autoFocus
          value={values.message}
          onChange={(e) => set({ message: e.target.value })}
          name="message"
          slotProps={{ htmlInput: { maxLength: 500 } }}
        />
        {template.type === 'deploy' && (
          <TextField
            select
            required
            label={t('run.buildVersion')}
            value={values.build_task_id || ''}
            onChange={(e) => set({ build_task_id: Number(e.target.value) })}
            name="build_task_id"
            {...err('build_task_id')}
          >
            {(builds.data ?? []).map((b) => (
              <MenuItem key={b.id} value={b.id}>
                {b.version ? `${b.version} (#${b.id})` : `#${b.id}`}
                {b.message ? ` — ${b.message}` : ''}
              </MenuItem>
            ))}
            {builds.data?.length === 0 && (
              <MenuItem disabled value="">
                {t('run.noBuilds')}
              </MenuItem>
            )}
          </TextField>
        )}
        {rerunOf && hasSecrets && <Alert severity="info">{t('run.secretsAgain')}</Alert>}
        {template.survey_vars.length > 0 && schema.isPending && (
          <CircularProgress size={24} aria-label={t('survey.run.loading')} sx={{ alignSelf: 'center' }} />
        )}
        <ErrorAlert error={schema.error} />
        <SurveyFields fields={fields} answers={values.survey} onChange={setSurvey} errors={surveyErrors} />
        {rerunOf?.commit_hash && (
          <FormControl>
            <FormLabel id="run-commit-label">{t('run.commit')}</FormLabel>
            <RadioGroup
              aria-labelledby="run-commit-label"
              name="commit"
              value={values.commit_of_task ? 'task' : 'head'}
              onChange={(e) => set({ commit_of_task: e.target.value === 'task' ? rerunOf.id : null })}
            >
              <FormControlLabel
                value="task"
                control={<Radio />}
                label={t('run.commitOfTask', { id: rerunOf.id, commit: rerunOf.commit_hash.slice(0, 10) })}
              />
              <FormControlLabel value="head" control={<Radio />} label={t('run.branchHead')} />
            </RadioGroup>
          </FormControl>
        )}
        {options.length > 0 && (
          <FormGroup row>
            {options.map((o) => (
              <FormControlLabel
                key={o}
                label={t(`run.options.${o}`)}
                control={<Checkbox checked={values[o]} onChange={(e) => set({ [o]: e.target.checked })} />}
              />
            ))}
          </FormGroup>
        )}
        {params.allow_override_limit && (
          <TextField
            label={t('run.limit')}
            helperText={t('run.listHelp')}
            value={values.limit}
            onChange={(e) => set({ limit: e.target.value })}
          />
        )}
        {params.allow_override_tags && (
          <TextField
            label={t('run.tags')}
            helperText={t('run.listHelp')}
            value={values.tags}
            onChange={(e) => set({ tags: e.target.value })}
          />
        )}
        {params.allow_override_skip_tags && (
          <TextField
            label={t('run.skipTags')}
            helperText={t('run.listHelp')}
            value={values.skip_tags}
            onChange={(e) => set({ skip_tags: e.target.value })}
          />
        )}
        {params.allow_override_inventory && (
          <TextField
            select
            label={t('res.inventory')}
            value={values.inventory_id || ''}
            onChange={(e) => set({ inventory_id: Number(e.target.value) })}
          >
            {(inventories.data ?? []).map((i) => (
              <MenuItem key={i.id} value={i.id}>
                {i.name}
              </MenuItem>
            ))}
          </TextField>
        )}
        {params.allow_override_environment && (
          <TextField
            select
            label={t('res.environment')}
            value={values.environment_id || ''}
            onChange={(e) => set({ environment_id: Number(e.target.value) })}
          >
            {(environments.data ?? []).map((env) => (
              <MenuItem key={env.id} value={env.id}>
                {env.name}
              </MenuItem>
            ))}
          </TextField>
        )}
        {template.allow_override_branch_in_task && (
          <TextField
            label={t('repos.branch')}
            value={values.git_branch}
            onChange={(e) => set({ git_branch: e.target.value })}
          />
        )}
        {template.allow_override_args_in_task && (
          <CodeEditor
            label={t('tpl.cliArgs')}
            mode="json"
            minHeight={80}
            value={values.arguments}
            onChange={(v) => set({ arguments: v })}
            error={!!errors.arguments}
            helperText={
              errors.arguments
                ? translateResourceMessage(errors.arguments, t, 'arguments')
                : t('tpl.cliArgsHelp')
            }
            testId="run-args-editor"
          />
        )}
        {template.type === 'deploy' && builds.error && <Alert severity="warning">{t('run.noBuilds')}</Alert>}
      </Stack>
    </FormDialog>
  );
}
