import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormError } from '../../../components/forms';
import { useNotify } from '../../../components/snackbar';
import { runPaths, useRunAction } from '../api';

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

/**
 * Approve or reject one approval node: what the approvers are told, how many approvals it has, and a reason —
 * required to reject, a remark when approving. The approval names the inputs' digest the dialog showed.
 */
export function ApprovalDialog({ target, onClose }: { target: ApprovalTarget; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const action = useRunAction(target.projectId);
  const [reason, setReason] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const names = { node: target.nodeName, id: target.runId };
  const approve = async () => {
    try {
      await action.mutateAsync({
        path: runPaths.approve(target.runId, target.nodeId),
        body: { digest: target.digest ?? '', reason: reason.trim() },
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
          {target.digest && (
            <Typography variant="caption" color="text.secondary" sx={{ wordBreak: 'break-all' }}>
              {t('wf.approval.digest', { digest: target.digest })}
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
          disabled={action.isPending}
          onClick={() => void approve()}
        >
          {t('approvals.approve')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
