import { MenuItem, Stack, TextField } from '@mui/material';
import {
  type AccessKey,
  appsNeedingPlaybook,
  type Environment,
  type Inventory,
  inventoryTypesForApp,
  type Repository,
  type Template,
  type View,
} from '@signalbox/contracts';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useFieldProps } from '../../../components/messages';
import { mui } from '../../../components/mui';
import { activeApps, appLabel, playbookLabelKey, useApps } from '../apps';
import { FlagCheckbox, IdSelect } from './fields';
import { VaultSection } from './VaultSection';
import type { SectionProps } from './values';

/** The objects a template refers to, loaded by the form. */
export type TemplateRefs = {
  inventories: Inventory[];
  repositories: Repository[];
  environments: Environment[];
  keys: AccessKey[];
  views: View[];
  templates: Template[];
};

/** What the playbook field suggests for the apps that run a file. */
const scriptPlaceholder: Record<string, string> = {
  ansible: 'play.yml',
  bash: 'run.sh',
  powershell: 'run.ps1',
  python: 'run.py',
};
/** The apps whose inventory is a workspace. */
const workspaceApps = ['terraform', 'tofu', 'terragrunt'];

/**
 * The left column: name, description, app and what it runs, the build/deploy fields of those types, and the
 * inventory, repository, environment, vault and view the template uses.
 */
export function GeneralSection({
  editing,
  refs,
  ...section
}: SectionProps & { editing: Template | undefined; refs: TemplateRefs }) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const { form, errors, serverError } = section;
  const { register, control, watch } = form;
  const type = watch('type') ?? '';
  const app = watch('app') || 'ansible';
  const allowedInventory = inventoryTypesForApp[app as keyof typeof inventoryTypesForApp];
  const inventoryOptions = refs.inventories.filter(
    (i) => !allowedInventory || allowedInventory.includes(i.type),
  );
  const buildTemplates = refs.templates.filter((x) => x.type === 'build' && x.id !== editing?.id);
  const playbookKey = playbookLabelKey(app);
  const playbookLabel = t(playbookKey);
  // The active apps of the server's registry; an app the template already has stays shown (saving it is refused).
  const registry = useApps().data;
  const choices: string[] = activeApps(registry);
  if (!choices.includes(app)) choices.push(app);

  return (
    <Stack spacing={2}>
      <TextField
        label={t('res.name')}
        required
        autoFocus
        {...mui(register('name'))}
        {...field(errors.name, serverError, 'name')}
      />
      <TextField label={t('res.description')} multiline minRows={2} {...mui(register('description'))} />
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
            {choices.map((a) => (
              <MenuItem key={a} value={a}>
                {registry?.some((r) => r.id === a && !r.active)
                  ? t('tpl.appInactive', { app: appLabel(t, a, registry) })
                  : appLabel(t, a, registry)}
              </MenuItem>
            ))}
          </TextField>
        )}
      />
      <TextField
        label={playbookLabel}
        required={appsNeedingPlaybook.includes(app)}
        placeholder={scriptPlaceholder[app] ?? ''}
        {...mui(register('playbook'))}
        {...field(errors.playbook, serverError, 'playbook', playbookKey)}
      />
      {type === 'build' && (
        <TextField
          label={t('tpl.startVersion')}
          required
          placeholder="0.0.0"
          helperText={t('tpl.startVersionHelp')}
          {...mui(register('start_version'))}
          {...field(errors.start_version, serverError, 'start_version')}
        />
      )}
      {type === 'deploy' && (
        <>
          <IdSelect
            {...section}
            name="build_template_id"
            label={t('tpl.buildTemplate')}
            options={buildTemplates}
            required
          />
          <FlagCheckbox form={form} name="autorun" label={t('tpl.autorun')} />
        </>
      )}
      <IdSelect
        {...section}
        name="inventory_id"
        label={t('res.inventory')}
        options={inventoryOptions}
        required={app === 'ansible'}
        none={app !== 'ansible'}
        helperText={workspaceApps.includes(app) ? t('tpl.workspaceHelp') : undefined}
      />
      <IdSelect
        {...section}
        name="repository_id"
        label={t('res.repository')}
        options={refs.repositories}
        required
      />
      <IdSelect
        {...section}
        name="environment_id"
        label={t('res.environment')}
        options={refs.environments}
        required
      />
      {app === 'ansible' && <VaultSection {...section} keys={refs.keys} />}
      <IdSelect
        {...section}
        name="view_id"
        label={t('tpl.view')}
        options={refs.views.map((v) => ({ id: v.id, name: v.title }))}
        none
      />
    </Stack>
  );
}
