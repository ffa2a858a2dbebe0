import type { UseFormRegisterReturn } from 'react-hook-form';

/** react-hook-form's register for MUI TextField: the ref must reach the <input> so setValue shows. */
export function mui(registered: UseFormRegisterReturn) {
  const { ref, ...rest } = registered;
  return { ...rest, inputRef: ref };
}
