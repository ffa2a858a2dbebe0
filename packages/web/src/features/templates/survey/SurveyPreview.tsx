import { Box, Stack, Typography } from '@mui/material';
import {
  emptySurveyVar,
  type SurveyOptionsOf,
  type SurveyVar,
  surveyJsonSchema,
  type TemplateSurveyVar,
} from '@signalbox/contracts';
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type Answer, type Answers, formFields, initialAnswers, SurveyFields } from '../../surveys';

/**
 * The run dialog's survey as the variables stand, beside the editor: the same schema document (built here, with
 * the fixed options only) and the same form. Options a source gives are fetched only when a task starts.
 */
export function SurveyPreview({ vars }: { vars: SurveyVar[] }) {
  const { t } = useTranslation();
  const { fields, fetchedLater } = useMemo(() => {
    const full: TemplateSurveyVar[] = vars.map((v) => ({ ...emptySurveyVar, ...v }));
    const options = new Map<string, SurveyOptionsOf>();
    for (const v of full)
      if (!v.options_source)
        options.set(v.name, { options: v.values.map((o) => ({ value: o.value, label: o.name })) });
    return {
      fields: formFields(surveyJsonSchema(full, options)),
      fetchedLater: new Set(full.filter((v) => v.options_source).map((v) => v.name)),
    };
  }, [vars]);
  const [edited, setEdited] = useState<Answers>({});
  // The defaults as they stand now, overridden by what was tried out in the preview.
  const answers = { ...initialAnswers(fields), ...edited };
  if (fields.length === 0) return null;
  return (
    <Box
      component="section"
      aria-labelledby="survey-preview-title"
      sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2, mt: 1 }}
    >
      <Typography variant="subtitle2" component="h4" id="survey-preview-title">
        {t('survey.preview.title')}
      </Typography>
      <Typography variant="caption" color="text.secondary" component="p" sx={{ mb: 2 }}>
        {t('survey.preview.help')}
      </Typography>
      <Stack spacing={2}>
        <SurveyFields
          fields={fields}
          answers={answers}
          onChange={(name: string, value: Answer) => setEdited((old) => ({ ...old, [name]: value }))}
          fetchedLater={fetchedLater}
          idPrefix="survey-preview"
        />
      </Stack>
    </Box>
  );
}
