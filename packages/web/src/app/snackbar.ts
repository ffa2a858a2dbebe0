import { useSnackbar } from 'notistack';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../i18n/messages';

/** Success and error snackbars; errors use the server's text. */
export function useNotify() {
  const { enqueueSnackbar } = useSnackbar();
  const { t } = useTranslation();
  const success = useCallback(
    (message: string) => enqueueSnackbar(message, { variant: 'success' }),
    [enqueueSnackbar],
  );
  const error = useCallback(
    (err: unknown) => enqueueSnackbar(errorText(err, t), { variant: 'error' }),
    [enqueueSnackbar, t],
  );
  return { success, error };
}
