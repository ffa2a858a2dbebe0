import { zodResolver } from '@hookform/resolvers/zod';
import { Box, Paper, Stack } from '@mui/material';
import {
  type AccessKey,
  type Environment,
  type Inventory,
  type Repository,
  type Schedule,
  type Template,
  type TemplateVaultColumns,
  templateInput,
  templateVaultsOf,
} from '@signalbox/contracts';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate, useSearchParams } from 'react-router';
import { useResourceList } from '../../api/resources';
import { useProjectContext } from '../../components/project-context';
import { Spinner } from '../../components/states';
import { ErrorAlert, PageBody, useResourceNotify } from '../../components/ui';
import { useTemplate, useTemplateMutations, useTemplates, useViews } from './api';
import { ArgumentsSection } from './form/ArgumentsSection';
import { CommitCheckSection } from './form/CommitCheckSection';
import { CronScheduleField } from './form/CronScheduleField';
import { scheduleProblem, useFormSchedule } from './form/cron-schedule';
import { FormActions } from './form/FormActions';
import { GeneralSection } from './form/GeneralSection';
import { OptionsSection } from './form/OptionsSection';
import { SurveySection } from './form/SurveySection';
import { TemplateFormHeader } from './form/TemplateFormHeader';
import { TypeTabs } from './form/TypeTabs';
import { defaults, type SectionProps, type Values } from './form/values';

/** templates/new/edit, templates/{id}/edit and copies (templates/new/edit?copy={id}). */
export function TemplateFormPage({ templateId, listPath }: { templateId: number | null; listPath: string }) {
  const { project } = useProjectContext();
  const [params] = useSearchParams();
  const copyId = Number(params.get('copy')) || 0;
  const sourceId = templateId ?? copyId;
  const source = useTemplate(project.id, sourceId, sourceId > 0);
  const formSchedule = useFormSchedule(project.id, templateId ?? undefined);
  const { t } = useTranslation();
  if ((sourceId > 0 && source.isPending) || (templateId && formSchedule.isPending))
    return <Spinner full={false} />;
  if ((sourceId > 0 && source.error) || formSchedule.error)
    return (
      <PageBody>
        <ErrorAlert error={source.error ?? formSchedule.error} />
      </PageBody>
    );
  const copyName = copyId && source.data ? t('tpl.copyName', { name: source.data.name }) : undefined;
  return (
    <TemplateForm
      key={`${sourceId}-${params.get('app') ?? ''}`}
      editing={templateId ? source.data : undefined}
      initial={defaults(source.data, params.get('app') ?? 'ansible', copyName)}
      schedule={(templateId && formSchedule.data) || null}
      listPath={listPath}
    />
  );
}

/** The form: type tabs, then the general fields beside survey, schedule, options and CLI args. */
function TemplateForm({
  editing,
  initial,
  schedule,
  listPath,
}: {
  editing: Template | undefined;
  initial: Values;
  /** The schedule the Cron schedule field edits (see form/cron-schedule.ts); null: none yet. */
  schedule: Schedule | null;
  listPath: string;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const notify = useResourceNotify();
  const { project } = useProjectContext();
  const { save } = useTemplateMutations(project.id);
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const repositories = useResourceList<Repository>(project.id, 'repositories');
  const environments = useResourceList<Environment>(project.id, 'environment');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const views = useViews(project.id);
  const allTemplates = useTemplates(project.id, null);
  const form = useForm<Values>({ resolver: zodResolver(templateInput), defaultValues: initial });
  const section: SectionProps = { form, errors: form.formState.errors, serverError: save.error };
  const [cron, setCron] = useState(schedule?.cron_format ?? '');
  const [cronError, setCronError] = useState<string | null>(null);

  const submit = form.handleSubmit(async (values) => {
    const wanted = cron.trim();
    setCronError(null);
    try {
      // The parsed values hold the vault as columns; the API takes its list form back (with its name).
      const { vault_name, vault_script, ...rest } = values as typeof values & TemplateVaultColumns;
      const vaults = templateVaultsOf({ vault_key_id: rest.vault_key_id ?? null, vault_name, vault_script });
      // The template and its own schedule are saved in one request: both are stored, or neither is.
      const saved = await save.mutateAsync({
        ...rest,
        vault_key_id: null,
        vaults,
        id: editing?.id ?? null,
        schedule: wanted ? { cron_format: wanted } : null,
      });
      notify.success(t(editing ? 'tpl.saved' : 'tpl.created', { name: values.name }));
      navigate(`${listPath}/${saved.id}`);
    } catch (err) {
      // Shown in the form; the server's word on the cron also on its field.
      setCronError(scheduleProblem(err));
    }
  });

  if (inventories.isPending || repositories.isPending || environments.isPending)
    return <Spinner full={false} />;

  return (
    <>
      <TemplateFormHeader editing={editing} listPath={listPath} />
      <PageBody>
        <Paper variant="outlined" sx={{ maxWidth: 960, mx: 'auto' }}>
          <TypeTabs form={form} />
          <Box
            component="form"
            id="template-form"
            noValidate
            onSubmit={(e) => void submit(e)}
            sx={{ p: { xs: 2, md: 3 } }}
          >
            <ErrorAlert error={save.error} />
            <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', md: '1fr 1fr' } }}>
              <GeneralSection
                {...section}
                editing={editing}
                refs={{
                  inventories: inventories.data ?? [],
                  repositories: repositories.data ?? [],
                  environments: environments.data ?? [],
                  keys: keys.data ?? [],
                  views: views.data ?? [],
                  templates: allTemplates.data ?? [],
                }}
              />
              <Stack spacing={1}>
                <SurveySection form={form} />
                <CronScheduleField
                  value={cron}
                  error={cronError}
                  paused={!!schedule && !schedule.active}
                  onChange={(v) => {
                    setCron(v);
                    setCronError(null);
                  }}
                />
                <CommitCheckSection {...section} repositories={repositories.data ?? []} />
                <OptionsSection {...section} />
                <ArgumentsSection {...section} />
              </Stack>
            </Box>
            <FormActions
              editing={!!editing}
              saving={save.isPending}
              onCancel={() => navigate(editing ? `${listPath}/${editing.id}` : listPath)}
            />
          </Box>
        </Paper>
      </PageBody>
    </>
  );
}
