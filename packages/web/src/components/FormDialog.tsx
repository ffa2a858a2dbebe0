import { Button, Dialog, DialogActions, DialogContent, DialogTitle, useMediaQuery } from '@mui/material';
import type { FormEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorAlert } from './ui';

/** An edit dialog around a form: title, server error, Cancel and Save; full screen on phones. */
export function FormDialog({
  open,
  title,
  error,
  pending,
  onSubmit,
  onClose,
  children,
  submitLabel,
  maxWidth = 'sm',
  formId,
}: {
  open: boolean;
  title: string;
  error?: unknown;
  pending?: boolean;
  onSubmit: (e: FormEvent) => void;
  onClose: () => void;
  children: ReactNode;
  submitLabel?: string;
  maxWidth?: 'xs' | 'sm' | 'md' | 'lg';
  formId: string;
}) {
  const { t } = useTranslation();
  const phone = useMediaQuery('(max-width:600px)', { noSsr: true });
  return (
    <Dialog
      open={open}
      onClose={onClose}
      fullWidth
      maxWidth={maxWidth}
      fullScreen={phone}
      aria-labelledby={`${formId}-title`}
    >
      <DialogTitle id={`${formId}-title`}>{title}</DialogTitle>
      <DialogContent dividers>
        <ErrorAlert error={error} />
        <form id={formId} noValidate onSubmit={onSubmit}>
          {children}
        </form>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.cancel')}</Button>
        <Button type="submit" form={formId} variant="contained" disabled={pending}>
          {submitLabel ?? t('common.save')}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
