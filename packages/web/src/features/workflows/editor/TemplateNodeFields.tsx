import { MenuItem, Stack, TextField } from '@mui/material';
import type { Environment, Inventory, Template, WorkflowTemplateNode } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { MappingList } from './MappingList';
import { type SourceContext, ValueSourceField } from './ValueSourceField';

/**
 * A template node's settings: the template it runs, the task's message, its template's survey answers and extra
 * variables, and the limit, branch, inventory, environment and build it overrides — each fixed, from the workflow
 * survey, or from an upstream node's output. The environment override needs a template that allows it.
 */
export function TemplateNodeFields({
  node,
  onChange,
  templates,
  inventories,
  environments,
  context,
  fieldError,
}: {
  node: WorkflowTemplateNode;
  onChange: (patch: Partial<WorkflowTemplateNode>) => void;
  templates: Template[];
  inventories: Inventory[];
  environments: Environment[];
  context: SourceContext;
  fieldError: (field: string) => string | undefined;
}) {
  const { t } = useTranslation();
  const template = templates.find((tpl) => tpl.id === node.template_id);
  const err = (field: string) => {
    const text = fieldError(field);
    return text ? { error: true, helperText: text } : {};
  };
  const prefix = `node-${node.id}`;
  return (
    <Stack spacing={2}>
      <TextField
        select
        size="small"
        required
        label={t('wf.node.template')}
        value={template ? String(node.template_id) : ''}
        onChange={(e) => onChange({ template_id: Number(e.target.value), survey: {} })}
        id={`${prefix}-template`}
        {...err('template_id')}
      >
        {templates.map((tpl) => (
          <MenuItem key={tpl.id} value={String(tpl.id)}>
            {tpl.name}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        size="small"
        label={t('wf.node.message')}
        value={node.message}
        onChange={(e) => onChange({ message: e.target.value })}
        slotProps={{ htmlInput: { maxLength: 500 } }}
        {...err('message')}
      />
      {template && template.survey_vars.length > 0 && (
        <MappingList
          title={t('wf.node.surveyAnswers')}
          value={node.survey}
          onChange={(survey) => onChange({ survey })}
          context={context}
          names={template.survey_vars.map((v) => v.name)}
          error={fieldError('survey')}
          idPrefix={`${prefix}-survey`}
        />
      )}
      <MappingList
        title={t('wf.node.extraVars')}
        value={node.extra_vars}
        onChange={(extra_vars) => onChange({ extra_vars })}
        context={context}
        error={fieldError('extra_vars')}
        idPrefix={`${prefix}-extra`}
      />
      <ValueSourceField
        label={t('wf.node.limit')}
        value={node.limit}
        onChange={(limit) => onChange({ limit })}
        context={context}
        optional
        error={fieldError('limit')}
        idPrefix={`${prefix}-limit`}
      />
      <ValueSourceField
        label={t('wf.node.branch')}
        value={node.git_branch}
        onChange={(git_branch) => onChange({ git_branch })}
        context={context}
        optional
        error={fieldError('git_branch')}
        idPrefix={`${prefix}-branch`}
      />
      <ValueSourceField
        label={t('wf.node.inventory')}
        value={node.inventory_id}
        onChange={(inventory_id) => onChange({ inventory_id })}
        context={context}
        optional
        numeric
        fixedOptions={inventories.map((i) => ({ value: i.id, label: i.name }))}
        error={fieldError('inventory_id')}
        idPrefix={`${prefix}-inventory`}
      />
      <ValueSourceField
        label={t('wf.node.environment')}
        value={node.environment_id}
        onChange={(environment_id) => onChange({ environment_id })}
        context={context}
        optional
        numeric
        fixedOptions={environments.map((e) => ({ value: e.id, label: e.name }))}
        error={
          fieldError('environment_id') ??
          (node.environment_id && template && !template.task_params?.allow_override_environment
            ? t('wf.node.environmentNotAllowed')
            : undefined)
        }
        idPrefix={`${prefix}-environment`}
      />
      {template?.type === 'deploy' && (
        <ValueSourceField
          label={t('wf.node.build')}
          value={node.build_task_id}
          onChange={(build_task_id) => onChange({ build_task_id })}
          context={context}
          optional
          numeric
          error={fieldError('build_task_id')}
          idPrefix={`${prefix}-build`}
        />
      )}
    </Stack>
  );
}
