import type { TFunction } from 'i18next';
import { useSnackbar } from 'notistack';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText } from '../i18n/messages';

/** Success and error snackbars; errors use the server's text, or what `text` makes of them. */
export function useNotify(text: (err: unknown, t: TFunction) => string = errorText) {
  const { enqueueSnackbar } = useSnackbar();
  const { t } = useTranslation();
  const success = useCallback(
    (message: string) => enqueueSnackbar(message, { variant: 'success' }),
    [enqueueSnackbar],
  );
  const error = useCallback(
    (err: unknown) => enqueueSnackbar(text(err, t), { variant: 'error' }),
    [enqueueSnackbar, t, text],
  );
  return { success, error };
}
