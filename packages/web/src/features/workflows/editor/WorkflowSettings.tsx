import { Stack, TextField, Typography } from '@mui/material';
import type { SurveyVar } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../../i18n/messages';
import { SurveyEditor } from '../../templates';
import type { Draft } from './draft';
import type { EditorErrors } from './errors';

/** The workflow's own fields, shown while no node or edge is selected: name, description and survey. */
export function WorkflowSettings({
  projectId,
  draft,
  onDraft,
  errors,
  readOnly,
}: {
  projectId: number;
  draft: Draft;
  onDraft: (draft: Draft) => void;
  errors: EditorErrors;
  readOnly: boolean;
}) {
  const { t } = useTranslation();
  const fieldError = (field: string) => {
    const coded = errors.fields.get(field);
    return coded ? { error: true, helperText: translateCode(coded, t, field) } : {};
  };
  const surveyError = errors.fields.get('survey_vars');
  return (
    <Stack spacing={2} component="section" aria-labelledby="workflow-settings-title">
      <Typography variant="h6" component="h2" id="workflow-settings-title">
        {t('wf.settings')}
      </Typography>
      <TextField
        size="small"
        required
        label={t('wf.name')}
        value={draft.name}
        onChange={(e) => onDraft({ ...draft, name: e.target.value })}
        slotProps={{ htmlInput: { maxLength: 100, readOnly } }}
        {...fieldError('name')}
      />
      <TextField
        size="small"
        multiline
        minRows={2}
        label={t('wf.description')}
        value={draft.description}
        onChange={(e) => onDraft({ ...draft, description: e.target.value })}
        slotProps={{ htmlInput: { maxLength: 10_000, readOnly } }}
        {...fieldError('description')}
      />
      {surveyError && (
        <Typography color="error" variant="body2" role="alert">
          {translateCode(surveyError, t, 'survey_vars')}
        </Typography>
      )}
      {!readOnly && (
        <SurveyEditor
          projectId={projectId}
          value={draft.survey_vars}
          onChange={(survey_vars: SurveyVar[]) => onDraft({ ...draft, survey_vars })}
        />
      )}
    </Stack>
  );
}
