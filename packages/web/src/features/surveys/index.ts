// What other features use of the survey form: the run dialog's questions and their answers.
export { useSurveySchema } from './api';
export { SurveyFields, SurveyInput } from './SurveyFields';
export {
  type Answer,
  type Answers,
  formFields,
  initialAnswers,
  type SurveyField,
  surveyBody,
  toAnswer,
  typedAnswer,
  visibleFields,
} from './survey-form';
