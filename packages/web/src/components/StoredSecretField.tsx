import { Button, InputAdornment, TextField, type TextFieldProps } from '@mui/material';
import { type Ref, useRef } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * A secret input of an object that already has the secret stored. The server never sends a stored secret back, so
 * the input starts empty: while `stored`, its helper text says so ("Stored — leave empty to keep") and offers Replace, which
 * clears and focuses the input for a new value. Saving with the input left empty keeps the stored secret.
 */
export function StoredSecretField({
  stored,
  onReplace,
  inputRef,
  ...props
}: TextFieldProps & { stored: boolean; onReplace: () => void }) {
  const { t } = useTranslation();
  const own = useRef<HTMLInputElement | HTMLTextAreaElement | null>(null);
  const setRef = (node: HTMLInputElement | HTMLTextAreaElement | null) => {
    own.current = node;
    if (typeof inputRef === 'function') inputRef(node);
    else if (inputRef && typeof inputRef === 'object') (inputRef as { current: unknown }).current = node;
  };
  const label = typeof props.label === 'string' ? props.label : '';
  return (
    <TextField
      {...props}
      inputRef={setRef as Ref<HTMLInputElement>}
      required={stored ? false : props.required}
      // Dots stand for the value kept; the hint below says what leaving it empty does (fully, even at 390 px).
      placeholder={stored ? '••••••••' : props.placeholder}
      helperText={props.helperText ?? (stored ? t('storedSecret.placeholder') : undefined)}
      slotProps={{
        ...props.slotProps,
        inputLabel: { shrink: stored || undefined },
        input: stored
          ? {
              endAdornment: (
                <InputAdornment
                  position="end"
                  sx={props.multiline ? { alignSelf: 'flex-start', mt: 1 } : undefined}
                >
                  <Button
                    size="small"
                    disabled={props.disabled}
                    aria-label={t('storedSecret.replaceNamed', { name: label })}
                    onClick={() => {
                      onReplace();
                      // The input re-renders without the hint first; focus it once it has.
                      requestAnimationFrame(() => own.current?.focus());
                    }}
                  >
                    {t('storedSecret.replace')}
                  </Button>
                </InputAdornment>
              ),
            }
          : undefined,
      }}
    />
  );
}
