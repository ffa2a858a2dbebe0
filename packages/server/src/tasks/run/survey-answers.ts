import { parseJson, parseJsonObject } from '../../db/values';

/** A survey variable as a template stores it (a restored backup may hold any shape: each field is checked). */
export type StoredSurveyVar = {
  name: string;
  title: string;
  type: string;
  required: boolean;
  defaultValue: string;
};

/** The template's survey variables, read from their stored JSON text; entries without a name are left out. */
export function surveyVarsOf(stored: string | null | undefined): StoredSurveyVar[] {
  const list = parseJson<unknown>(stored, []);
  if (!Array.isArray(list)) return [];
  const out: StoredSurveyVar[] = [];
  for (const v of list) {
    if (!v || typeof v !== 'object') continue;
    const r = v as Record<string, unknown>;
    if (typeof r.name !== 'string' || r.name === '') continue;
    out.push({
      name: r.name,
      title: typeof r.title === 'string' && r.title.trim() ? r.title : r.name,
      type: typeof r.type === 'string' ? r.type : '',
      required: r.required === true,
      defaultValue: typeof r.default_value === 'string' ? r.default_value : '',
    });
  }
  return out;
}

/** Whether a value answers a survey variable: absent, null and blank text do not. */
export const isAnswered = (value: unknown) =>
  value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');

/** The required survey variables neither the values nor a default of the variable can answer. */
export function unanswerableSurveyVars(surveyVars: StoredSurveyVar[], values: Record<string, unknown> = {}) {
  return surveyVars.filter((v) => v.required && !isAnswered(values[v.name]) && !isAnswered(v.defaultValue));
}

/** The required survey variables the values do not answer (defaults are not looked at: a run gets only values). */
export function unansweredSurveyVars(surveyVars: StoredSurveyVar[], values: Record<string, unknown>) {
  return surveyVars.filter((v) => v.required && !isAnswered(values[v.name]));
}

/**
 * A new task's survey answers with the defaults of the required variables it leaves unanswered filled in, as the
 * task form fills them: a secret variable's default goes to the secret values, any other's to the environment
 * (an int variable's as a number, as the form sends it). Returns the JSON texts to store (unchanged when nothing
 * was filled).
 */
export function withSurveyDefaults(
  surveyVars: StoredSurveyVar[],
  environment: string | undefined,
  secret: string | undefined,
): { environment: string | undefined; secret: string | undefined } {
  const env = parseJsonObject(environment);
  const sec = parseJsonObject(secret);
  let envFilled = false;
  let secretFilled = false;
  for (const v of surveyVars) {
    if (!v.required || isAnswered(env[v.name]) || isAnswered(sec[v.name]) || !isAnswered(v.defaultValue))
      continue;
    if (v.type === 'secret') {
      sec[v.name] = v.defaultValue;
      secretFilled = true;
    } else {
      const text = v.defaultValue.trim();
      env[v.name] = v.type === 'int' && /^\d+$/.test(text) ? Number(text) : v.defaultValue;
      envFilled = true;
    }
  }
  return {
    environment: envFilled ? JSON.stringify(env) : environment,
    secret: secretFilled ? JSON.stringify(sec) : secret,
  };
}
