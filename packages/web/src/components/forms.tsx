import { Alert, Checkbox, FormControlLabel } from '@mui/material';
import { type Control, Controller, type FieldError, type FieldValues, type Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { errorText, serverFieldText, translateMessage } from '../i18n/messages';
import { useNotify } from './snackbar';

/** A form's server error, in a red alert. */
export function FormError({ error }: { error: unknown }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <Alert severity="error" role="alert" sx={{ mb: 2 }}>
      {errorText(error, t)}
    </Alert>
  );
}

/**
 * A dialog's save: runs `save` with the body, says `message` in a success snackbar, calls `onSaved` with the
 * answer and closes the dialog; a failure leaves the dialog open, showing the mutation's error.
 */
export function useSaveAndClose<B, R>(save: { mutateAsync: (body: B) => Promise<R> }, onClose: () => void) {
  const notify = useNotify();
  return async (body: B | Promise<B>, message: string, onSaved?: (saved: R) => void) => {
    try {
      const saved = await save.mutateAsync(await body);
      notify.success(message);
      onSaved?.(saved);
      onClose();
    } catch {
      // Shown in the dialog.
    }
  };
}

/** Props for a TextField from a react-hook-form field error, the message in the current language. */
export function useFieldError() {
  const { t } = useTranslation();
  return (error: FieldError | undefined, serverError?: unknown, name?: string) => {
    if (error?.message !== undefined)
      return error.message ? { error: true, helperText: translateMessage(error.message, t, name) } : {};
    const server = name ? serverFieldText(serverError, name, t) : undefined;
    return server ? { error: true, helperText: server } : {};
  };
}

/** A checkbox bound to a react-hook-form field. */
export function CheckboxField<T extends FieldValues>({
  control,
  name,
  label,
  disabled,
}: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  disabled?: boolean;
}) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field }) => (
        <FormControlLabel
          label={label}
          disabled={disabled}
          control={
            <Checkbox
              checked={!!field.value}
              onChange={(e) => field.onChange(e.target.checked)}
              onBlur={field.onBlur}
              name={field.name}
            />
          }
        />
      )}
    />
  );
}
