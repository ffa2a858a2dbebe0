import { Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, TextField } from '@mui/material';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { taskKeys } from './api';

export const approvalKeys = {
  waiting: (projectId: number) => ['project', projectId, 'tasks', 'waiting_approval'] as const,
};

/** Approves a run waiting for approval, or rejects it with an optional reason; refreshes the lists showing it. */
export function useApprovalAnswer(projectId: number, taskId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (answer: { approve: true } | { approve: false; reason: string }) =>
      api(`/project/${projectId}/tasks/${taskId}/${answer.approve ? 'approve' : 'reject'}`, {
        method: 'POST',
        body: answer.approve ? {} : { reason: answer.reason },
      }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) });
      void client.invalidateQueries({ queryKey: taskKeys.history(projectId) });
      void client.invalidateQueries({ queryKey: approvalKeys.waiting(projectId) });
    },
  });
}

/** Approve and Reject (with a reason asked in a dialog) of one run waiting for approval. */
export function ApprovalActions({ projectId, taskId }: { projectId: number; taskId: number }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const answer = useApprovalAnswer(projectId, taskId);
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const approve = async () => {
    try {
      await answer.mutateAsync({ approve: true });
      notify.success(t('approvals.approvedNotice', { id: taskId }));
    } catch (err) {
      notify.error(err);
    }
  };
  const reject = async () => {
    try {
      await answer.mutateAsync({ approve: false, reason: reason.trim() });
      setRejecting(false);
      notify.success(t('approvals.rejectedNotice', { id: taskId }));
    } catch {
      // Shown in the dialog.
    }
  };
  return (
    <Stack direction="row" spacing={1}>
      <Button variant="contained" color="success" size="small" disabled={answer.isPending} onClick={approve}>
        {t('approvals.approve')}
      </Button>
      <Button
        variant="outlined"
        color="error"
        size="small"
        disabled={answer.isPending}
        onClick={() => {
          answer.reset();
          setRejecting(true);
        }}
      >
        {t('approvals.reject')}
      </Button>
      {rejecting && (
        <Dialog
          open
          onClose={() => setRejecting(false)}
          fullWidth
          maxWidth="sm"
          aria-labelledby="reject-title"
        >
          <DialogTitle id="reject-title">{t('approvals.rejectTitle', { id: taskId })}</DialogTitle>
          <DialogContent>
            <Stack spacing={2} sx={{ pt: 1 }}>
              {answer.error && <FormError error={answer.error} />}
              <TextField
                label={t('approvals.reason')}
                value={reason}
                onChange={(e) => setReason(e.target.value)}
                slotProps={{ htmlInput: { maxLength: 500 } }}
                multiline
                autoFocus
              />
            </Stack>
          </DialogContent>
          <DialogActions>
            <Button onClick={() => setRejecting(false)}>{t('common.cancel')}</Button>
            <Button color="error" variant="contained" disabled={answer.isPending} onClick={reject}>
              {t('approvals.reject')}
            </Button>
          </DialogActions>
        </Dialog>
      )}
    </Stack>
  );
}
