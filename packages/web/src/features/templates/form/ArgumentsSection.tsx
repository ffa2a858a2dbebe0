import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { CodeEditor } from '../../../components/CodeEditor';
import { useFieldProps } from '../../../components/messages';
import { FlagCheckbox } from './fields';
import type { SectionProps } from './values';

/** The CLI args (a JSON array) and whether a task run may change them. */
export function ArgumentsSection({ form, errors, serverError }: SectionProps) {
  const { t } = useTranslation();
  const field = useFieldProps();
  const error = field(errors.arguments, serverError, 'arguments').helperText;
  return (
    <>
      <Controller
        control={form.control}
        name="arguments"
        render={({ field: f }) => (
          <CodeEditor
            label={t('tpl.cliArgs')}
            mode="json"
            minHeight={80}
            value={f.value ?? ''}
            onChange={f.onChange}
            testId="template-args-editor"
            {...(error ? { error: true, helperText: error } : { helperText: t('tpl.cliArgsHelp') })}
          />
        )}
      />
      <FlagCheckbox form={form} name="allow_override_args_in_task" label={t('tpl.allowArgs')} />
    </>
  );
}
