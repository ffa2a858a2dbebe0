import type { TFunction } from 'i18next';
import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { errorText, serverFieldText, translateMessage } from '../i18n/messages';

/** Translates a form's own message of the resource screens by its code, naming `field` (a request field key). */
export function translateResourceMessage(
  message: string,
  t: TFunction,
  field?: string,
  label?: string,
): string {
  return translateMessage(message, t, field, label);
}

/** The text to show for any failure on these screens. */
export function resourceErrorText(err: unknown, t: TFunction): string {
  return errorText(err, t);
}

type FieldErr = { message?: string } | undefined;

/**
 * TextField props for a field: the form's own error, else the server's error for `name`, translated. `labelKey`
 * names the field by a catalogue key when the form labels it otherwise than its request key does.
 */
export function useFieldProps() {
  const { t } = useTranslation();
  return useCallback(
    (error: FieldErr, serverError?: unknown, name?: string, labelKey?: string) => {
      const label = labelKey ? t(labelKey) : undefined;
      if (error?.message !== undefined)
        return error.message
          ? { error: true, helperText: translateMessage(error.message, t, name, label) }
          : {};
      const server = name ? serverFieldText(serverError, name, t, label) : undefined;
      return server ? { error: true, helperText: server } : {};
    },
    [t],
  );
}
