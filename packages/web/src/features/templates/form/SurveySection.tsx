import type { SurveyVar } from '@signalbox/contracts';
import { Controller } from 'react-hook-form';
import { SurveyEditor } from '../SurveyEditor';
import type { SectionProps } from './values';

/** The survey variables a task run asks for. */
export function SurveySection({ form }: Pick<SectionProps, 'form'>) {
  return (
    <Controller
      control={form.control}
      name="survey_vars"
      render={({ field: f }) => <SurveyEditor value={(f.value ?? []) as SurveyVar[]} onChange={f.onChange} />}
    />
  );
}
