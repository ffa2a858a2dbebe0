import { Button, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle } from '@mui/material';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormError } from './forms';
import { useNotify } from './snackbar';

type Props = {
  open: boolean;
  title: string;
  text: ReactNode;
  confirmLabel?: string;
  pending?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
};

/** Asks before something irreversible; the confirm button is red. */
export function ConfirmDialog({
  open,
  title,
  text,
  confirmLabel,
  pending,
  error,
  onConfirm,
  onClose,
}: Props) {
  const { t } = useTranslation();
  return (
    <Dialog open={open} onClose={onClose} maxWidth="xs" fullWidth>
      <DialogTitle>{title}</DialogTitle>
      <DialogContent>
        <FormError error={error} />
        <DialogContentText>{text}</DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button color="error" variant="contained" disabled={pending} onClick={onConfirm}>
          {confirmLabel ?? t('common.delete')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}

/**
 * A delete behind a ConfirmDialog: `ask` picks the target (clearing the last failure); confirming deletes it,
 * says `deletedMessage(target)` in a snackbar and closes; a failure stays in the dialog.
 */
export function useConfirmedDelete<T, Id>(
  remove: {
    mutateAsync: (id: Id) => Promise<unknown>;
    reset: () => void;
    isPending: boolean;
    error: unknown;
  },
  idOf: (target: T) => Id,
  deletedMessage: (target: T) => string,
) {
  const notify = useNotify();
  const [target, setTarget] = useState<T | null>(null);
  const close = () => setTarget(null);
  const confirm = async () => {
    if (!target) return;
    try {
      await remove.mutateAsync(idOf(target));
      notify.success(deletedMessage(target));
      setTarget(null);
    } catch {
      // Shown in the dialog.
    }
  };
  return {
    target,
    ask: (next: T) => {
      remove.reset();
      setTarget(next);
    },
    close,
    /** The ConfirmDialog's open, pending, error, onConfirm and onClose. */
    dialogProps: {
      open: !!target,
      pending: remove.isPending,
      error: remove.error,
      onConfirm: () => void confirm(),
      onClose: close,
    },
  };
}
