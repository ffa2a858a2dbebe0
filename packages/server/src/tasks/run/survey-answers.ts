import {
  emptySurveyVar,
  optionsSourceSchema,
  type SurveyVarType,
  surveyVarTypes,
  surveyVisibility,
  type TemplateSurveyVar,
  typedSurveyDefault,
  type VisibleWhen,
  visibleWhenSchema,
} from '@signalbox/contracts';
import { parseJson, parseJsonObject } from '../../db/values';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const textOf = (v: unknown) =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
const numberOf = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const countOf = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
const isSurveyVarType = (v: unknown): v is SurveyVarType => surveyVarTypes.some((type) => type === v);

/**
 * Stored survey variables (parsed JSON) in the shape the template form writes. A restored backup keeps its
 * variables as written (fields missing or added): they read with the form's defaults, so every template answers
 * the same shape.
 */
export function templateSurveyVarsOf(stored: unknown): TemplateSurveyVar[] {
  if (!Array.isArray(stored)) return [];
  return stored.filter(isRecord).map((v) => ({
    name: textOf(v.name),
    title: textOf(v.title),
    description: textOf(v.description),
    type: isSurveyVarType(v.type) ? v.type : '',
    required: v.required === true,
    values: (Array.isArray(v.values) ? v.values : [])
      .filter(isRecord)
      .map((item) => ({ name: textOf(item.name), value: textOf(item.value) })),
    default_value: textOf(v.default_value),
    min_length: countOf(v.min_length),
    max_length: countOf(v.max_length),
    regex: typeof v.regex === 'string' && v.regex ? v.regex : null,
    regex_message: textOf(v.regex_message),
    min: numberOf(v.min),
    max: numberOf(v.max),
    step: numberOf(v.step),
    min_selected: countOf(v.min_selected),
    max_selected: countOf(v.max_selected),
    options_source: optionsSourceSchema.safeParse(v.options_source).data ?? null,
    visible_when: visibleWhenSchema.safeParse(v.visible_when).data ?? null,
  }));
}

/** A survey variable as a template stores it (a restored backup may hold any shape: each field is checked). */
export type StoredSurveyVar = {
  name: string;
  title: string;
  type: string;
  required: boolean;
  defaultValue: string;
  visibleWhen: VisibleWhen | null;
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
      visibleWhen: visibleWhenSchema.safeParse(r.visible_when).data ?? null,
    });
  }
  return out;
}

/** Whether a value answers a survey variable: absent, null and blank text do not. */
export const isAnswered = (value: unknown) =>
  value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');

const asTemplateVar = (v: StoredSurveyVar): TemplateSurveyVar => ({
  ...emptySurveyVar,
  name: v.name,
  title: v.title,
  type: isSurveyVarType(v.type) ? v.type : '',
  required: v.required,
  default_value: v.defaultValue,
  visible_when: v.visibleWhen,
});

/** The variables the values leave hidden (a `visible_when` condition not met): they are not asked. */
function hiddenSurveyVars(surveyVars: StoredSurveyVar[], values: Record<string, unknown>) {
  if (!surveyVars.some((v) => v.visibleWhen)) return new Set<string>();
  const shown = surveyVisibility(surveyVars.map(asTemplateVar), values);
  return new Set([...shown].filter(([, visible]) => !visible).map(([name]) => name));
}

/** The required, shown survey variables neither the values nor a default of the variable can answer. */
export function unanswerableSurveyVars(surveyVars: StoredSurveyVar[], values: Record<string, unknown> = {}) {
  const hidden = hiddenSurveyVars(surveyVars, values);
  return surveyVars.filter(
    (v) => v.required && !hidden.has(v.name) && !isAnswered(values[v.name]) && !isAnswered(v.defaultValue),
  );
}

/**
 * The required, shown survey variables the values do not answer (defaults are not looked at: a run gets only
 * values).
 */
export function unansweredSurveyVars(surveyVars: StoredSurveyVar[], values: Record<string, unknown>) {
  const hidden = hiddenSurveyVars(surveyVars, values);
  return surveyVars.filter((v) => v.required && !hidden.has(v.name) && !isAnswered(values[v.name]));
}

/**
 * A new task's survey answers with the defaults of the required variables it leaves unanswered filled in, as the
 * task form fills them: a secret variable's default goes to the secret values, any other's to the environment
 * (typed as `typedSurveyDefault` reads it: a number, a boolean, a list, an object). Returns the JSON texts to store (unchanged when nothing
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
      env[v.name] = isSurveyVarType(v.type)
        ? typedSurveyDefault({ type: v.type, default_value: v.defaultValue })
        : v.defaultValue;
      envFilled = true;
    }
  }
  return {
    environment: envFilled ? JSON.stringify(env) : environment,
    secret: secretFilled ? JSON.stringify(sec) : secret,
  };
}
