// What other features use of the templates feature: its query keys and queries, run labels and view mutations,
// and the survey editor (workflows have surveys of the same model).
export { rerunLabelKey, runLabelKey, templateKeys, useTemplate, useViewMutations } from './api';
export { SurveyEditor } from './SurveyEditor';
