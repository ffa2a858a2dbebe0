import AddLinkIcon from '@mui/icons-material/AddLink';
import LinkOffIcon from '@mui/icons-material/LinkOff';
import { Alert, Box, Button, IconButton, MenuItem, Stack, TextField, Typography } from '@mui/material';
import type { CodedMessage, WorkflowEdgeCondition } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../../i18n/messages';
import { ConditionSelect } from './ConditionSelect';
import { type ConnectProblem, connect, type Draft, nodeLabel, removeEdge, setCondition } from './draft';
import { edgeKey } from './errors';

/**
 * A node's edges without the mouse: each incoming and outgoing edge with its condition and a remove button, and a
 * form connecting the node to another one (the keyboard's way to draw an edge).
 */
export function ConnectionsSection({
  draft,
  nodeId,
  onDraft,
  edgeErrors,
}: {
  draft: Draft;
  nodeId: string;
  onDraft: (draft: Draft) => void;
  edgeErrors: Map<string, CodedMessage>;
}) {
  const { t } = useTranslation();
  const [target, setTarget] = useState('');
  const [condition, setNewCondition] = useState<WorkflowEdgeCondition>('success');
  const [problem, setProblem] = useState<ConnectProblem | null>(null);
  const title = (id: string) => {
    const node = draft.nodes.find((n) => n.id === id);
    return node ? nodeLabel(node) : id;
  };
  const touching = draft.edges.filter((e) => e.from === nodeId || e.to === nodeId);
  const others = draft.nodes.filter((n) => n.id !== nodeId);
  const add = () => {
    if (!target) return;
    const next = connect(draft, nodeId, target, condition);
    if (typeof next === 'string') return setProblem(next);
    setProblem(null);
    setTarget('');
    onDraft(next);
  };
  return (
    <Box component="section" aria-labelledby={`connections-${nodeId}`}>
      <Typography variant="subtitle2" component="h3" id={`connections-${nodeId}`} sx={{ mb: 1 }}>
        {t('wf.connect.title')}
      </Typography>
      <Stack spacing={1.5}>
        {touching.length === 0 && (
          <Typography variant="body2" color="text.secondary">
            {t('wf.connect.none')}
          </Typography>
        )}
        {touching.map((e) => {
          const label = t('wf.edge.label', {
            from: title(e.from),
            to: title(e.to),
            condition: t(`wf.condition.${e.condition}`),
          });
          const error = edgeErrors.get(edgeKey(e.from, e.to));
          return (
            <Box
              key={edgeKey(e.from, e.to)}
              data-edge={edgeKey(e.from, e.to)}
              sx={{ display: 'flex', gap: 1, alignItems: 'flex-start' }}
            >
              <ConditionSelect
                label={
                  e.from === nodeId
                    ? t('wf.connect.to', { name: title(e.to) })
                    : t('wf.connect.from', { name: title(e.from) })
                }
                value={e.condition}
                onChange={(c) => onDraft(setCondition(draft, e.from, e.to, c))}
                error={error ? translateCode(error, t, 'condition') : undefined}
              />
              <IconButton
                aria-label={t('wf.edge.remove', { edge: label })}
                onClick={() => onDraft(removeEdge(draft, e.from, e.to))}
              >
                <LinkOffIcon fontSize="small" />
              </IconButton>
            </Box>
          );
        })}
        {others.length > 0 && (
          <Box sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'flex-start' }}>
            <TextField
              select
              size="small"
              label={t('wf.connect.target')}
              value={target}
              onChange={(e) => setTarget(e.target.value)}
              sx={{ flex: '1 1 160px' }}
              id={`connect-target-${nodeId}`}
            >
              {others.map((n) => (
                <MenuItem key={n.id} value={n.id}>
                  {nodeLabel(n)}
                </MenuItem>
              ))}
            </TextField>
            <ConditionSelect
              label={t('wf.connect.condition')}
              value={condition}
              onChange={setNewCondition}
              id={`connect-condition-${nodeId}`}
            />
            <Button startIcon={<AddLinkIcon />} onClick={add} disabled={!target}>
              {t('wf.connect.add')}
            </Button>
          </Box>
        )}
        {problem && (
          <Alert severity="warning" role="alert">
            {t(`wf.connect.problem.${problem}`)}
          </Alert>
        )}
      </Stack>
    </Box>
  );
}
