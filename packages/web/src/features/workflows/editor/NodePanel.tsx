import DeleteIcon from '@mui/icons-material/Delete';
import { Alert, Box, Button, Divider, Stack, TextField, Typography } from '@mui/material';
import type { Environment, Inventory, Template, WorkflowNode } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../../i18n/messages';
import { ApprovalNodeFields } from './ApprovalNodeFields';
import { ConnectionsSection } from './ConnectionsSection';
import { DelayNodeFields } from './DelayNodeFields';
import { ancestorsOf, type Draft, nodeLabel, updateNode } from './draft';
import type { EditorErrors } from './errors';
import { TemplateNodeFields } from './TemplateNodeFields';

/** The fields the panels show an error at; a node's error about any other part is said above them. */
const shownFields = new Set([
  'name',
  'template_id',
  'message',
  'survey',
  'extra_vars',
  'limit',
  'git_branch',
  'inventory_id',
  'environment_id',
  'build_task_id',
  'roles',
  'user_ids',
  'required',
  'timeout_seconds',
  'on_timeout',
  'seconds',
  'time_of_day',
  'timezone',
]);

/** The selected node's settings: its name, its kind's fields, its connections, and Delete. */
export function NodePanel({
  draft,
  node,
  onDraft,
  onDelete,
  templates,
  inventories,
  environments,
  members,
  errors,
}: {
  draft: Draft;
  node: WorkflowNode;
  onDraft: (draft: Draft) => void;
  onDelete: () => void;
  templates: Template[];
  inventories: Inventory[];
  environments: Environment[];
  members: { user_id: number; name: string }[];
  errors: EditorErrors;
}) {
  const { t } = useTranslation();
  const mine = errors.nodes.get(node.id) ?? [];
  const fieldError = (field: string) => {
    const found = mine.find((e) => e.field === field);
    return found ? translateCode(found.error, t, field) : undefined;
  };
  const general = mine.filter((e) => e.field === null || !shownFields.has(e.field));
  const change = (patch: Partial<WorkflowNode>) => onDraft(updateNode(draft, node.id, patch));
  const before = ancestorsOf(draft.edges, node.id);
  const context = {
    surveyNames: draft.survey_vars.map((v) => v.name),
    upstream: draft.nodes
      .filter((n) => n.type === 'template' && before.has(n.id))
      .map((n) => ({ id: n.id, title: nodeLabel(n) })),
  };
  const nameError = fieldError('name');
  return (
    <Stack spacing={2} component="section" aria-labelledby="node-panel-title" data-panel-node={node.id}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
        <Typography variant="h6" component="h2" id="node-panel-title" sx={{ flex: 1, minWidth: 0 }} noWrap>
          {t(`wf.nodeType.${node.type}`)}: {nodeLabel(node)}
        </Typography>
        <Button color="error" startIcon={<DeleteIcon />} onClick={onDelete}>
          {t('wf.node.delete')}
        </Button>
      </Box>
      {general.map((e) => (
        <Alert key={`${e.error.code}-${e.field}`} severity="error" role="alert">
          {translateCode(e.error, t, e.field ?? undefined)}
        </Alert>
      ))}
      <TextField
        size="small"
        label={t('wf.node.name')}
        value={node.name}
        onChange={(e) => change({ name: e.target.value })}
        slotProps={{ htmlInput: { maxLength: 100 } }}
        {...(nameError
          ? { error: true, helperText: nameError }
          : { helperText: t('wf.node.idHelp', { id: node.id }) })}
      />
      {node.type === 'template' && (
        <TemplateNodeFields
          node={node}
          onChange={change}
          templates={templates}
          inventories={inventories}
          environments={environments}
          context={context}
          fieldError={fieldError}
        />
      )}
      {node.type === 'approval' && (
        <ApprovalNodeFields node={node} onChange={change} members={members} fieldError={fieldError} />
      )}
      {node.type === 'delay' && <DelayNodeFields node={node} onChange={change} fieldError={fieldError} />}
      <Divider />
      <ConnectionsSection draft={draft} nodeId={node.id} onDraft={onDraft} edgeErrors={errors.edges} />
    </Stack>
  );
}
