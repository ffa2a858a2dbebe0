import type { SurveyVar } from '@signalbox/contracts';
import { Controller } from 'react-hook-form';
import { useProjectContext } from '../../../components/project-context';
import { SurveyEditor } from '../SurveyEditor';
import type { SectionProps } from './values';

/** The survey variables a task run asks for. */
export function SurveySection({ form }: Pick<SectionProps, 'form'>) {
  const { project } = useProjectContext();
  return (
    <Controller
      control={form.control}
      name="survey_vars"
      render={({ field: f }) => (
        <SurveyEditor projectId={project.id} value={(f.value ?? []) as SurveyVar[]} onChange={f.onChange} />
      )}
    />
  );
}
