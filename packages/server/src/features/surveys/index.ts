// The surveys feature as other features may use it: a run's answers checked against the template's survey.
export { surveyAnswersForRun, surveySchemaOf } from './survey-check';
