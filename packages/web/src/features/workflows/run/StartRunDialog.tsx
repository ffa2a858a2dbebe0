import { Stack, TextField, Typography } from '@mui/material';
import {
  emptySurveyVar,
  type SurveyOptionsOf,
  surveyJsonSchema,
  type Workflow,
  type WorkflowRun,
} from '@signalbox/contracts';
import { type FormEvent, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { FormDialog } from '../../../components/FormDialog';
import { serverFieldText } from '../../../i18n/messages';
import {
  type Answer,
  type Answers,
  formFields,
  initialAnswers,
  SurveyFields,
  surveyBody,
} from '../../surveys';
import { runPaths, useRunAction } from '../api';

/**
 * Starts a run: a message and the workflow survey's answers (the same questions a template's run form asks, with
 * the fixed options; the server checks every answer and says which one it refused at its field). Opens the run.
 */
export function StartRunDialog({ workflow, onClose }: { workflow: Workflow; onClose: () => void }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const start = useRunAction(workflow.project_id);
  const fields = useMemo(() => {
    const vars = workflow.survey_vars.map((v) => ({ ...emptySurveyVar, ...v }));
    const options = new Map<string, SurveyOptionsOf>();
    for (const v of vars)
      options.set(v.name, { options: v.values.map((o) => ({ value: o.value, label: o.name })) });
    return formFields(surveyJsonSchema(vars, options));
  }, [workflow.survey_vars]);
  const [message, setMessage] = useState('');
  const [answers, setAnswers] = useState<Answers>(() => initialAnswers(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const { environment, secret } = surveyBody(fields, answers);
    try {
      const run: WorkflowRun = await start.mutateAsync({
        path: runPaths.start(workflow.id),
        body: { message, survey: { ...environment, ...secret } },
      });
      onClose();
      navigate(`/project/${workflow.project_id}/workflow-runs/${run.id}`);
    } catch (err) {
      const next: Record<string, string> = {};
      for (const f of fields) {
        const text = serverFieldText(err, `survey.${f.name}`, t, f.title);
        if (text) next[f.name] = text;
      }
      setErrors(next);
    }
  };

  return (
    <FormDialog
      open
      formId="start-workflow-run"
      title={t('wf.start.title', { name: workflow.name })}
      error={Object.keys(errors).length > 0 ? undefined : start.error}
      pending={start.isPending}
      submitLabel={t('wf.run')}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
    >
      <Stack spacing={2}>
        {workflow.description && (
          <Typography variant="body2" color="text.secondary" sx={{ whiteSpace: 'pre-wrap' }}>
            {workflow.description}
          </Typography>
        )}
        <TextField
          label={t('run.message')}
          autoFocus
          value={message}
          onChange={(e) => setMessage(e.target.value)}
          name="message"
          slotProps={{ htmlInput: { maxLength: 500 } }}
        />
        <SurveyFields
          fields={fields}
          answers={answers}
          onChange={(name: string, value: Answer) => {
            setAnswers((old) => ({ ...old, [name]: value }));
            setErrors(({ [name]: _, ...rest }) => rest);
          }}
          errors={errors}
        />
      </Stack>
    </FormDialog>
  );
}
