import { issue, type SurveyVar, surveyVarSchema } from '@signalbox/contracts';
import { z } from 'zod';

/** A survey as a JSON file holds it: the list of its variables, as templates save them. */
export const surveyListSchema = z.array(surveyVarSchema).max(500);

/** The survey as JSON text, for a download or the clipboard. */
export const exportSurvey = (vars: SurveyVar[]) => `${JSON.stringify(vars, null, 2)}\n`;

/** One problem of an imported survey: where (the variable's position and field, when known) and its coded message. */
export type ImportProblem = { path: string; message: string };

/**
 * Reads a survey from JSON text: its variables, or the problems found (coded messages, each with its path such as
 * `2.values`: the third variable's values).
 */
export function importSurvey(text: string): { vars: SurveyVar[] } | { problems: ImportProblem[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problems: [{ path: '', message: issue('invalid_json') }] };
  }
  if (!Array.isArray(value)) return { problems: [{ path: '', message: issue('not_json_array') }] };
  const parsed = surveyListSchema.safeParse(value);
  if (parsed.success) return { vars: parsed.data };
  return {
    problems: parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  };
}
