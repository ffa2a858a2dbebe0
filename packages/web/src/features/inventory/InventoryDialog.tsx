import { zodResolver } from '@hookform/resolvers/zod';
import { Alert, Stack, TextField } from '@mui/material';
import { type AccessKey, type Inventory, inventoryInput, type Repository } from '@signalbox/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { z } from 'zod';
import { api } from '../../api/client';
import { resourceKey, useResourceSave } from '../../api/resources';
import { CodeEditor } from '../../components/CodeEditor';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { useFieldProps } from '../../components/messages';
import { mui } from '../../components/mui';
import { idOptions, SelectField } from '../../components/SelectField';
import { RunnerTagField } from '../runners';

export type InventoryKind = 'generic' | 'terraform' | 'tofu' | 'terragrunt';
type Values = z.input<typeof inventoryInput>;

const EXAMPLE_PATH = 'inventories/hosts.ini';
const genericTypes = ['static', 'static-yaml', 'file'] as const;

/** Generic inventories (INI, YAML, file) and terraform/tofu/terragrunt workspaces. */
export function InventoryDialog({
  projectId,
  kind,
  item,
  keys,
  repositories,
  readOnly,
  onClose,
}: {
  projectId: number;
  kind: InventoryKind;
  item: Inventory | null;
  keys: AccessKey[];
  repositories: Repository[];
  readOnly?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'inventory');
  const field = useFieldProps();
  const workspace = kind !== 'generic';
  const workspaceType =
    kind === 'tofu'
      ? 'tofu-workspace'
      : kind === 'terragrunt'
        ? 'terragrunt-workspace'
        : 'terraform-workspace';
  const { register, handleSubmit, control, watch, formState } = useForm<Values>({
    resolver: zodResolver(inventoryInput),
    defaultValues: {
      name: item?.name ?? '',
      type: item?.type ?? (workspace ? workspaceType : 'static'),
      inventory: item?.inventory ?? '',
      ssh_key_id: item?.ssh_key_id ?? null,
      become_key_id: item?.become_key_id ?? null,
      repository_id: item?.repository_id ?? null,
      runner_tag: item?.runner_tag ?? '',
    },
  });
  const type = watch('type');
  const errors = formState.errors;

  /** A workspace runs with the project's None key: create it when the project has none. */
  const noneKeyId = async () => {
    const existing = keys.find((k) => k.type === 'none');
    if (existing) return existing.id;
    const created = await api<AccessKey>(`/project/${projectId}/keys`, {
      method: 'POST',
      body: { name: 'None', type: 'none', project_id: projectId },
    });
    void client.invalidateQueries({ queryKey: resourceKey(projectId, 'keys') });
    return created.id;
  };

  const bodyOf = async (values: Values) => {
    const body = workspace
      ? { ...values, type: workspaceType, ssh_key_id: await noneKeyId(), become_key_id: null }
      : values;
    return { ...body, id: item?.id ?? null };
  };
  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = handleSubmit((values) =>
    saveAndClose(bodyOf(values), t(item ? 'inventory.saved' : 'inventory.created', { name: values.name })),
  );

  const keySelect = (name: 'ssh_key_id' | 'become_key_id', label: string, required: boolean) => (
    <SelectField
      control={control}
      name={name}
      label={label}
      options={idOptions(keys)}
      none={!required}
      required={required}
      disabled={readOnly}
      serverError={save.error}
    />
  );

  const title = item ? t('inventory.edit') : t('inventory.newKind', { kind: t(`inventory.kinds.${kind}`) });

  return (
    <FormDialog
      open
      formId="inventory-form"
      title={title}
      error={save.error}
      pending={save.isPending || readOnly}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
      maxWidth="md"
    >
      <Stack spacing={2}>
        {readOnly && <Alert severity="info">{t('res.readOnly')}</Alert>}
        <TextField
          label={workspace ? t('inventory.displayName') : t('res.name')}
          required
          autoFocus
          disabled={readOnly}
          {...mui(register('name'))}
          {...field(errors.name, save.error, 'name')}
        />
        {workspace ? (
          <TextField
            label={t('inventory.workspaceName')}
            required
            disabled={readOnly}
            helperText={t('inventory.workspaceHelp')}
            {...mui(register('inventory'))}
            {...field(errors.inventory, save.error, 'inventory', 'inventory.workspaceName')}
          />
        ) : (
          <>
            {keySelect('ssh_key_id', t('inventory.userCredentials'), true)}
            {keySelect('become_key_id', t('inventory.sudoCredentials'), false)}
            <SelectField
              control={control}
              name="type"
              label={t('res.type')}
              options={genericTypes.map((g) => ({ value: g, label: t(`inventory.types.${g}`) }))}
              required
              disabled={readOnly}
              serverError={save.error}
            />
            {type === 'file' ? (
              <>
                <TextField
                  label={t('inventory.path')}
                  required
                  disabled={readOnly}
                  placeholder={EXAMPLE_PATH}
                  {...mui(register('inventory'))}
                  {...field(errors.inventory, save.error, 'inventory', 'inventory.path')}
                />
                <SelectField
                  control={control}
                  name="repository_id"
                  label={t('res.repository')}
                  options={idOptions(repositories)}
                  none
                  disabled={readOnly}
                  serverError={save.error}
                />
              </>
            ) : (
              <Controller
                control={control}
                name="inventory"
                render={({ field: f }) => (
                  <CodeEditor
                    label={type === 'static-yaml' ? t('inventory.contentYaml') : t('inventory.contentIni')}
                    mode={type === 'static-yaml' ? 'yaml' : 'ini'}
                    value={f.value ?? ''}
                    onChange={f.onChange}
                    readOnly={readOnly}
                    testId="inventory-editor"
                    {...field(errors.inventory, save.error, 'inventory')}
                  />
                )}
              />
            )}
          </>
        )}
        <Controller
          control={control}
          name="runner_tag"
          render={({ field: f }) => (
            <RunnerTagField
              projectId={projectId}
              value={f.value}
              onChange={f.onChange}
              disabled={readOnly}
              {...field(errors.runner_tag, save.error, 'runner_tag')}
            />
          )}
        />
      </Stack>
    </FormDialog>
  );
}
