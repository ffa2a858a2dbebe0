import { MenuItem, TextField, type TextFieldProps } from '@mui/material';
import { type Control, Controller, type FieldValues, type Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useFieldProps } from './messages';
import { pickedValue, type SelectOption, shownValue } from './select-value';

export { idOptions, type SelectOption } from './select-value';

/**
 * A select bound to a react-hook-form field. The field keeps the picked option's own value (a number id stays a
 * number); `none` adds an empty first row, kept as null. The form's error for the field shows below it, else the
 * server's error for `name` in `serverError`, else `helperText`.
 */
export function SelectField<T extends FieldValues>({
  control,
  name,
  label,
  options,
  none,
  required,
  disabled,
  autoFocus,
  fullWidth,
  size,
  helperText,
  serverError,
}: {
  control: Control<T>;
  name: Path<T>;
  label: string;
  options: readonly SelectOption[];
  none?: boolean;
  required?: boolean;
  disabled?: boolean;
  autoFocus?: boolean;
  fullWidth?: boolean;
  size?: TextFieldProps['size'];
  helperText?: string;
  serverError?: unknown;
}) {
  const { t } = useTranslation();
  const fieldProps = useFieldProps();
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => (
        <TextField
          select
          label={label}
          required={required}
          disabled={disabled}
          autoFocus={autoFocus}
          fullWidth={fullWidth}
          size={size}
          value={shownValue(options, field.value)}
          onChange={(e) => field.onChange(pickedValue(options, e.target.value))}
          onBlur={field.onBlur}
          name={field.name}
          helperText={helperText}
          {...fieldProps(fieldState.error, serverError, name)}
        >
          {none && (
            <MenuItem value="">
              <em>{t('res.none')}</em>
            </MenuItem>
          )}
          {options.map((o) => (
            <MenuItem key={String(o.value)} value={o.value} disabled={o.disabled}>
              {o.label}
            </MenuItem>
          ))}
        </TextField>
      )}
    />
  );
}
