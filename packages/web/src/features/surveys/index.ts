// What other features use of the survey form: the run dialog's questions and their answers.
export { useSurveySchema } from './api';
export { SurveyFields } from './SurveyFields';
export {
  type Answer,
  type Answers,
  initialAnswers,
  type SurveyField,
  surveyBody,
  surveyFields,
  visibleFields,
} from './survey-form';
