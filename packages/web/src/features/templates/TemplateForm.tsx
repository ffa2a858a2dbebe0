import { zodResolver } from '@hookform/resolvers/zod';
import {
  Box,
  Breadcrumbs,
  Button,
  Checkbox,
  FormControlLabel,
  FormGroup,
  Link,
  MenuItem,
  Paper,
  Stack,
  Tab,
  Tabs,
  TextField,
  Typography,
} from '@mui/material';
import {
  type AccessKey,
  apps,
  commitCheckIntervals,
  type Environment,
  type Inventory,
  inventoryTypesForApp,
  type Repository,
  type SurveyVar,
  type Template,
  templateInput,
} from '@signalbox/contracts';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate, useSearchParams } from 'react-router';
import type { z } from 'zod';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useTemplate, useTemplateMutations, useTemplates, useViews } from './api';
import { SurveyEditor } from './SurveyEditor';
import { useResourceList } from './shared/api';
import { CodeEditor } from './shared/CodeEditor';
import { useFieldProps } from './shared/messages';
import { mui } from './shared/mui';
import { ErrorAlert, PageBody, useResourceNotify } from './shared/ui';

type Values = z.input<typeof templateInput>;
/** Catalogue keys of the check-new-commits intervals, in the order of commitCheckIntervals. */
const intervalKeys = ['min1', 'min5', 'min10', 'hour1', 'hour24'] as const;
const taskParamFlags = [
  'allow_override_inventory',
  'allow_override_limit',
  'allow_override_tags',
  'allow_override_skip_tags',
  'allow_debug',
] as const;

function defaults(source: Template | undefined, app: string, copyName?: string): Values {
  return {
    name: copyName ?? source?.name ?? '',
    description: source?.description ?? '',
    type: source?.type ?? '',
    app: (source?.app ?? (apps.includes(app as never) ? app : 'ansible')) as Values['app'],
    playbook: source?.playbook ?? '',
    inventory_id: source?.inventory_id ?? null,
    repository_id: source?.repository_id ?? null,
    environment_id: source?.environment_id ?? null,
    vault_key_id: source?.vault_key_id ?? null,
    view_id: source?.view_id ?? null,
    build_template_id: source?.build_template_id ?? null,
    start_version: source?.start_version ?? '',
    autorun: source?.autorun ?? false,
    suppress_success_alerts: source?.suppress_success_alerts ?? false,
    arguments: source?.arguments ?? '',
    allow_override_args_in_task: source?.allow_override_args_in_task ?? false,
    allow_override_branch_in_task: source?.allow_override_branch_in_task ?? false,
    allow_parallel_tasks: source?.allow_parallel_tasks ?? false,
    git_branch: source?.git_branch ?? '',
    survey_vars: source?.survey_vars ?? [],
    task_params: source?.task_params ?? {},
    check_new_commits: source?.check_new_commits ?? false,
    cron_format: source?.check_new_commits ? source.cron_format : '* * * * *',
    check_new_commits_repository_id: source?.check_new_commits_repository_id ?? null,
  };
}

/** templates/new/edit, templates/{id}/edit and copies (templates/new/edit?copy={id}). */
export function TemplateFormPage({ templateId, listPath }: { templateId: number | null; listPath: string }) {
  const { project } = useProjectContext();
  const [params] = useSearchParams();
  const copyId = Number(params.get('copy')) || 0;
  const sourceId = templateId ?? copyId;
  const source = useTemplate(project.id, sourceId, sourceId > 0);
  const { t } = useTranslation();
  if (sourceId > 0 && source.isPending) return <Spinner full={false} />;
  if (sourceId > 0 && source.error)
    return (
      <PageBody>
        <ErrorAlert error={source.error} />
      </PageBody>
    );
  const copyName = copyId && source.data ? t('tpl.copyName', { name: source.data.name }) : undefined;
  return (
    <TemplateForm
      key={`${sourceId}-${params.get('app') ?? ''}`}
      editing={templateId ? source.data : undefined}
      initial={defaults(source.data, params.get('app') ?? 'ansible', copyName)}
      listPath={listPath}
    />
  );
}

function TemplateForm({
  editing,
  initial,
  listPath,
}: {
  editing: Template | undefined;
  initial: Values;
  listPath: string;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const notify = useResourceNotify();
  const { project } = useProjectContext();
  const field = useFieldProps();
  const { save } = useTemplateMutations(project.id);
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const repositories = useResourceList<Repository>(project.id, 'repositories');
  const environments = useResourceList<Environment>(project.id, 'environment');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const views = useViews(project.id);
  const allTemplates = useTemplates(project.id, null);
  const { register, handleSubmit, control, watch, setValue, formState } = useForm<Values>({
    resolver: zodResolver(templateInput),
    defaultValues: initial,
  });
  const errors = formState.errors;
  const type = watch('type') ?? '';
  const app = watch('app') || 'ansible';
  const checkCommits = !!watch('check_new_commits');
  const taskParams = (watch('task_params') ?? {}) as Record<string, unknown>;
  const allowedInventory = inventoryTypesForApp[app as keyof typeof inventoryTypesForApp];
  const inventoryOptions = (inventories.data ?? []).filter(
    (i) => !allowedInventory || allowedInventory.includes(i.type),
  );
  const buildTemplates = (allTemplates.data ?? []).filter((x) => x.type === 'build' && x.id !== editing?.id);
  const playbookLabel =
    app === 'ansible' ? t('tpl.playbook') : app === 'bash' ? t('tpl.script') : t('tpl.subdirectory');

  const submit = handleSubmit(async (values) => {
    try {
      const saved = await save.mutateAsync({ ...values, id: editing?.id ?? null });
      notify.success(t(editing ? 'tpl.saved' : 'tpl.created', { name: values.name }));
      navigate(`${listPath}/${saved.id}`);
    } catch {
      // Shown in the form.
    }
  });

  const select = (
    name:
      | 'inventory_id'
      | 'repository_id'
      | 'environment_id'
      | 'vault_key_id'
      | 'view_id'
      | 'build_template_id'
      | 'check_new_commits_repository_id',
    label: string,
    options: { id: number; name: string }[],
    opts: { required?: boolean; none?: boolean; helperText?: string } = {},
  ) => (
    <Controller
      control={control}
      name={name}
      render={({ field: f }) => (
        <TextField
          select
          fullWidth
          label={label}
          required={opts.required}
          value={f.value || ''}
          onChange={(e) => f.onChange(Number(e.target.value) || null)}
          onBlur={f.onBlur}
          name={f.name}
          helperText={opts.helperText}
          {...field(errors[name], save.error, name)}
        >
          {opts.none && (
            <MenuItem value="">
              <em>{t('res.none')}</em>
            </MenuItem>
          )}
          {options.map((o) => (
            <MenuItem key={o.id} value={o.id}>
              {o.name}
            </MenuItem>
          ))}
        </TextField>
      )}
    />
  );

  const check = (
    name:
      | 'autorun'
      | 'suppress_success_alerts'
      | 'allow_override_args_in_task'
      | 'allow_override_branch_in_task'
      | 'allow_parallel_tasks'
      | 'check_new_commits',
    label: string,
  ) => (
    <Controller
      control={control}
      name={name}
      render={({ field: f }) => (
        <FormControlLabel
          label={label}
          control={
            <Checkbox checked={!!f.value} onChange={(e) => f.onChange(e.target.checked)} name={f.name} />
          }
        />
      )}
    />
  );

  if (inventories.isPending || repositories.isPending || environments.isPending)
    return <Spinner full={false} />;

  return (
    <>
      <Box
        sx={{
          px: { xs: 2, md: 3 },
          py: 2,
          borderBottom: 1,
          borderColor: 'divider',
          bgcolor: 'background.paper',
        }}
      >
        <Breadcrumbs aria-label={t('tpl.breadcrumb')} sx={{ '& ol': { flexWrap: 'wrap' } }}>
          <Link component={RouterLink} to={listPath} variant="h6" underline="hover">
            {t('nav.templates')}
          </Link>
          {editing && (
            <Link component={RouterLink} to={`${listPath}/${editing.id}`} variant="h6" underline="hover">
              {editing.name}
            </Link>
          )}
          <Typography variant="h6" component="h1" sx={{ fontWeight: 700 }}>
            {editing ? t('tpl.edit') : t('tpl.new')}
          </Typography>
        </Breadcrumbs>
      </Box>
      <PageBody>
        <Paper variant="outlined" sx={{ maxWidth: 960, mx: 'auto' }}>
          <Controller
            control={control}
            name="type"
            render={({ field: f }) => (
              <Tabs
                value={f.value ?? ''}
                onChange={(_, v) => f.onChange(v)}
                aria-label={t('res.type')}
                variant="fullWidth"
                sx={{ borderBottom: 1, borderColor: 'divider' }}
              >
                <Tab value="" label={t('tpl.types.task')} />
                <Tab value="build" label={t('tpl.types.build')} />
                <Tab value="deploy" label={t('tpl.types.deploy')} />
              </Tabs>
            )}
          />
          <Box
            component="form"
            id="template-form"
            noValidate
            onSubmit={(e) => void submit(e)}
            sx={{ p: { xs: 2, md: 3 } }}
          >
            <ErrorAlert error={save.error} />
            <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', md: '1fr 1fr' } }}>
              <Stack spacing={2}>
                <TextField
                  label={t('res.name')}
                  required
                  autoFocus
                  {...mui(register('name'))}
                  {...field(errors.name, save.error, 'name')}
                />
                <TextField
                  label={t('res.description')}
                  multiline
                  minRows={2}
                  {...mui(register('description'))}
                />
                <Controller
                  control={control}
                  name="app"
                  render={({ field: f }) => (
                    <TextField
                      select
                      label={t('tpl.app')}
                      value={f.value || 'ansible'}
                      onChange={f.onChange}
                      name={f.name}
                    >
                      {apps.map((a) => (
                        <MenuItem key={a} value={a}>
                          {t(`tpl.apps.${a}`)}
                        </MenuItem>
                      ))}
                    </TextField>
                  )}
                />
                <TextField
                  label={playbookLabel}
                  required={app === 'ansible' || app === 'bash'}
                  placeholder={app === 'ansible' ? 'play.yml' : app === 'bash' ? 'run.sh' : ''}
                  {...mui(register('playbook'))}
                  {...field(errors.playbook, save.error, 'playbook')}
                />
                {type === 'build' && (
                  <TextField
                    label={t('tpl.startVersion')}
                    required
                    placeholder="0.0.0"
                    helperText={t('tpl.startVersionHelp')}
                    {...mui(register('start_version'))}
                    {...field(errors.start_version, save.error, 'start_version')}
                  />
                )}
                {type === 'deploy' && (
                  <>
                    {select('build_template_id', t('tpl.buildTemplate'), buildTemplates, { required: true })}
                    {check('autorun', t('tpl.autorun'))}
                  </>
                )}
                {select('inventory_id', t('res.inventory'), inventoryOptions, {
                  required: app === 'ansible',
                  none: app !== 'ansible',
                  helperText: app === 'terraform' || app === 'tofu' ? t('tpl.workspaceHelp') : undefined,
                })}
                {select('repository_id', t('res.repository'), repositories.data ?? [], { required: true })}
                {select('environment_id', t('res.environment'), environments.data ?? [], { required: true })}
                {app === 'ansible' &&
                  select(
                    'vault_key_id',
                    t('tpl.vaultKey'),
                    (keys.data ?? []).filter((k) => k.type === 'login_password'),
                    { none: true },
                  )}
                {select(
                  'view_id',
                  t('tpl.view'),
                  (views.data ?? []).map((v) => ({ id: v.id, name: v.title })),
                  { none: true },
                )}
              </Stack>
              <Stack spacing={1}>
                <Controller
                  control={control}
                  name="survey_vars"
                  render={({ field: f }) => (
                    <SurveyEditor value={(f.value ?? []) as SurveyVar[]} onChange={f.onChange} />
                  )}
                />
                <Box sx={{ pt: 1 }}>
                  <Typography variant="subtitle2" component="h3">
                    {t('tpl.schedule')}
                  </Typography>
                  {check('check_new_commits', t('tpl.checkNewCommits'))}
                  {checkCommits && (
                    <Stack spacing={2} sx={{ mt: 1 }}>
                      {select(
                        'check_new_commits_repository_id',
                        t('res.repository'),
                        repositories.data ?? [],
                        { required: true },
                      )}
                      <Controller
                        control={control}
                        name="cron_format"
                        render={({ field: f }) => (
                          <TextField
                            select
                            label={t('tpl.interval')}
                            value={f.value || '* * * * *'}
                            onChange={f.onChange}
                            name={f.name}
                          >
                            {commitCheckIntervals.map((i, index) => (
                              <MenuItem key={i.cron} value={i.cron}>
                                {t(`tpl.intervals.${intervalKeys[index]}`)}
                              </MenuItem>
                            ))}
                            {!commitCheckIntervals.some((i) => i.cron === f.value) && f.value && (
                              <MenuItem value={f.value}>{f.value}</MenuItem>
                            )}
                          </TextField>
                        )}
                      />
                    </Stack>
                  )}
                </Box>
                <Box sx={{ pt: 1 }}>
                  <Typography variant="subtitle2" component="h3">
                    {t('tpl.options')}
                  </Typography>
                  <FormGroup>
                    {check('suppress_success_alerts', t('tpl.suppressSuccessAlerts'))}
                    {check('allow_parallel_tasks', t('tpl.allowParallel'))}
                    {check('allow_override_branch_in_task', t('tpl.allowBranch'))}
                    {app === 'ansible' &&
                      taskParamFlags.map((flag) => (
                        <FormControlLabel
                          key={flag}
                          label={t(`tpl.params.${flag}`)}
                          control={
                            <Checkbox
                              checked={!!taskParams[flag]}
                              onChange={(e) =>
                                setValue('task_params', {
                                  ...taskParams,
                                  [flag]: e.target.checked,
                                } as Values['task_params'])
                              }
                            />
                          }
                        />
                      ))}
                  </FormGroup>
                </Box>
                <Controller
                  control={control}
                  name="arguments"
                  render={({ field: f }) => (
                    <CodeEditor
                      label={t('tpl.cliArgs')}
                      mode="json"
                      minHeight={80}
                      value={f.value ?? ''}
                      onChange={f.onChange}
                      testId="template-args-editor"
                      {...(field(errors.arguments, save.error, 'arguments').helperText
                        ? {
                            error: true,
                            helperText: field(errors.arguments, save.error, 'arguments').helperText,
                          }
                        : { helperText: t('tpl.cliArgsHelp') })}
                    />
                  )}
                />
                {check('allow_override_args_in_task', t('tpl.allowArgs'))}
              </Stack>
            </Box>
            <Box sx={{ display: 'flex', justifyContent: 'flex-end', gap: 1, mt: 3 }}>
              <Button onClick={() => navigate(editing ? `${listPath}/${editing.id}` : listPath)}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" variant="contained" disabled={save.isPending}>
                {editing ? t('common.save') : t('common.create')}
              </Button>
            </Box>
          </Box>
        </Paper>
      </PageBody>
    </>
  );
}
