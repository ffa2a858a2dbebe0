import LinkOffIcon from '@mui/icons-material/LinkOff';
import { Button, Stack, Typography } from '@mui/material';
import type { WorkflowEdge } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../../i18n/messages';
import { ConditionSelect } from './ConditionSelect';
import { type Draft, nodeLabel, removeEdge, setCondition } from './draft';
import { type EditorErrors, edgeKey } from './errors';

/** The selected edge: its condition and Remove. */
export function EdgePanel({
  draft,
  edge,
  onDraft,
  onRemoved,
  errors,
}: {
  draft: Draft;
  edge: WorkflowEdge;
  onDraft: (draft: Draft) => void;
  onRemoved: () => void;
  errors: EditorErrors;
}) {
  const { t } = useTranslation();
  const title = (id: string) => {
    const node = draft.nodes.find((n) => n.id === id);
    return node ? nodeLabel(node) : id;
  };
  const error = errors.edges.get(edgeKey(edge.from, edge.to));
  return (
    <Stack spacing={2} component="section" aria-labelledby="edge-panel-title">
      <Typography variant="h6" component="h2" id="edge-panel-title">
        {t('wf.edge.title', { from: title(edge.from), to: title(edge.to) })}
      </Typography>
      <ConditionSelect
        label={t('wf.connect.condition')}
        value={edge.condition}
        onChange={(c) => onDraft(setCondition(draft, edge.from, edge.to, c))}
        error={error ? translateCode(error, t, 'condition') : undefined}
      />
      <Typography variant="body2" color="text.secondary">
        {t(`wf.conditionHelp.${edge.condition}`)}
      </Typography>
      <Button
        color="error"
        startIcon={<LinkOffIcon />}
        sx={{ alignSelf: 'flex-start' }}
        onClick={() => {
          onDraft(removeEdge(draft, edge.from, edge.to));
          onRemoved();
        }}
      >
        {t('wf.edge.removeShort')}
      </Button>
    </Stack>
  );
}
