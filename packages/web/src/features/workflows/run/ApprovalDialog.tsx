import {
  Box,
  Button,
  CircularProgress,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import type { WorkflowApprovalInput } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormError } from '../../../components/forms';
import { useNotify } from '../../../components/snackbar';
import { runPaths, useRunAction, useWorkflowRun } from '../api';

export type ApprovalTarget = {
  projectId: number;
  runId: number;
  nodeId: string;
  nodeName: string;
  workflowName: string;
  message: string;
  /** The digest of the inputs the approver is shown: an approval names it, so a change since voids it. */
  digest: string | null;
  given: number | null;
  required: number | null;
};

/** The field of a template node an input sets, as the editor names it. */
const fieldLabelKeys: Record<string, string> = {
  limit: 'wf.node.limit',
  git_branch: 'wf.node.branch',
  inventory_id: 'wf.node.inventory',
  environment_id: 'wf.node.environment',
  build_task_id: 'wf.node.build',
};

function valueText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The values the template nodes after the approval run with, node by node: each value (secret ones arrive masked
 * from the server), or why it is not known, and where it comes from.
 */
function ApprovalInputs({
  inputs,
  nodeName,
}: {
  inputs: WorkflowApprovalInput[];
  nodeName: (id: string) => string;
}) {
  const { t } = useTranslation();
  if (inputs.length === 0)
    return (
      <Typography variant="body2" color="text.secondary">
        {t('wf.approval.noInputs')}
      </Typography>
    );
  const nodes = [...new Set(inputs.map((i) => i.node_id))];
  const sourceText = (i: WorkflowApprovalInput) =>
    i.source.from === 'fixed'
      ? t('wf.approval.source.fixed')
      : i.source.from === 'survey'
        ? t('wf.approval.source.survey', { name: i.source.name })
        : t('wf.approval.source.output', { name: i.source.name, node: nodeName(i.source.node) });
  return (
    <Stack spacing={1.5} data-testid="approval-inputs">
      {nodes.map((nodeId) => {
        const own = inputs.filter((i) => i.node_id === nodeId);
        return (
          <Box key={nodeId} component="section" aria-label={own[0]?.node_name ?? nodeId}>
            <Typography variant="subtitle2" component="h3">
              {own[0]?.node_name ?? nodeId}
            </Typography>
            <Box
              component="dl"
              sx={{
                m: 0,
                display: 'grid',
                gridTemplateColumns: { xs: 'minmax(0, 1fr)', sm: 'minmax(0, 1fr) minmax(0, 2fr)' },
                columnGap: 2,
                rowGap: 0.5,
              }}
            >
              {own.map((i) => (
                <Box
                  key={`${i.field}.${i.name ?? ''}`}
                  sx={{ display: 'contents' }}
                  data-input={`${i.node_id}.${i.field}${i.name ? `.${i.name}` : ''}`}
                >
                  <Typography
                    component="dt"
                    variant="body2"
                    sx={{ fontWeight: 500, overflowWrap: 'anywhere' }}
                  >
                    {i.name ?? t(fieldLabelKeys[i.field] ?? i.field)}
                  </Typography>
                  <Box component="dd" sx={{ m: 0, minWidth: 0 }}>
                    <Typography
                      variant="body2"
                      sx={{
                        fontFamily: i.state === 'value' ? 'monospace' : undefined,
                        overflowWrap: 'anywhere',
                      }}
                      color={i.state === 'value' ? 'text.primary' : 'text.secondary'}
                    >
                      {i.state === 'pending'
                        ? t('wf.approval.pending')
                        : i.state === 'missing'
                          ? t('wf.approval.missing')
                          : i.label
                            ? `${i.label} (${valueText(i.value)})`
                            : valueText(i.value)}
                    </Typography>
                    <Typography variant="caption" color="text.secondary">
                      {sourceText(i)}
                    </Typography>
                  </Box>
                </Box>
              ))}
            </Box>
          </Box>
        );
      })}
    </Stack>
  );
}

/**
 * Approve or reject one approval node: what the approvers are told, how many approvals it has, the values the
 * nodes after it run with (read from the run, secret ones masked), and a reason — required to reject, a remark when
 * approving. The approval names the digest of the inputs the dialog showed, so a change since voids it.
 */
export function ApprovalDialog({ target, onClose }: { target: ApprovalTarget; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const action = useRunAction(target.projectId);
  const run = useWorkflowRun(target.projectId, target.runId);
  const state = run.data?.node_states.find((n) => n.node_id === target.nodeId);
  // The digest read with the inputs shown: an approval binds to what the approver saw.
  const digest = state?.input_digest ?? target.digest;
  const [reason, setReason] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const names = { node: target.nodeName, id: target.runId };
  const approve = async () => {
    try {
      await action.mutateAsync({
        path: runPaths.approve(target.runId, target.nodeId),
        body: { digest: digest ?? '', reason: reason.trim() },
      });
      notify.success(t('wf.approval.approvedNotice', names));
      onClose();
    } catch {
      // Shown in the dialog.
    }
  };
  const reject = async () => {
    if (!reason.trim()) return setMissingReason(true);
    try {
      await action.mutateAsync({
        path: runPaths.reject(target.runId, target.nodeId),
        body: { reason: reason.trim() },
      });
      notify.success(t('wf.approval.rejectedNotice', names));
      onClose();
    } catch {
      // Shown in the dialog.
    }
  };
  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="sm" aria-labelledby="wf-approval-title">
      <DialogTitle id="wf-approval-title">
        {t('wf.approval.dialogTitle', { node: target.nodeName, id: target.runId })}
      </DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          <FormError error={action.error} />
          <Typography variant="body2" color="text.secondary">
            {t('wf.approval.of', { workflow: target.workflowName, id: target.runId })}
          </Typography>
          {target.message && (
            <Typography sx={{ whiteSpace: 'pre-wrap' }} data-testid="approval-message">
              {target.message}
            </Typography>
          )}
          {target.required !== null && (
            <Typography variant="body2">
              {t('wf.approval.progress', { given: target.given ?? 0, required: target.required })}
            </Typography>
          )}
          <Box component="section" aria-labelledby="wf-approval-inputs">
            <Typography variant="subtitle1" component="h2" id="wf-approval-inputs">
              {t('wf.approval.inputs')}
            </Typography>
            <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
              {t('wf.approval.inputsHelp')}
            </Typography>
            <FormError error={run.error} />
            {state?.inputs ? (
              <ApprovalInputs
                inputs={state.inputs}
                nodeName={(id) => run.data?.nodes.find((n) => n.id === id)?.name || id}
              />
            ) : (
              run.isPending && <CircularProgress size={20} aria-label={t('wf.approval.inputs')} />
            )}
          </Box>
          {digest && (
            <Typography variant="caption" color="text.secondary" sx={{ wordBreak: 'break-all' }}>
              {t('wf.approval.digest', { digest })}
            </Typography>
          )}
          <TextField
            label={t('wf.approval.reason')}
            value={reason}
            onChange={(e) => {
              setReason(e.target.value);
              setMissingReason(false);
            }}
            multiline
            minRows={2}
            autoFocus
            slotProps={{ htmlInput: { maxLength: 500 } }}
            {...(missingReason
              ? { error: true, helperText: t('wf.approval.reasonRequired') }
              : { helperText: t('wf.approval.reasonHelp') })}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button color="error" variant="outlined" disabled={action.isPending} onClick={() => void reject()}>
          {t('approvals.reject')}
        </Button>
        <Button
          color="success"
          variant="contained"
          disabled={action.isPending || run.isPending}
          onClick={() => void approve()}
        >
          {t('approvals.approve')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
