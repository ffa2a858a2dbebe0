import {
  askedSurveyVars,
  type CodedMessage,
  coded,
  isSurveyAnswered,
  type JsonSchema,
  surveyJsonSchema,
  surveyMustAnswer,
  surveySchemaKeywords,
  surveyVisibility,
  type TemplateSurveyVar,
  typedSurveyDefault,
} from '@signalbox/contracts';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parseJson, parseJsonObject } from '../../db/values';
import type { Deps } from '../../deps';
import { badRequest, type FieldError } from '../../lib/errors';
import { templateSurveyVarsOf } from '../../tasks/run/survey-answers';
import { resolveSurveyOptions } from '../survey-options';

type Where = { projectId: number; templateId: number };

/** Sets a key of answers as their own (a variable may be named `__proto__`). */
const setOwn = (answers: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(answers, key, { value, enumerable: true, writable: true, configurable: true });

/** A template's survey (its stored JSON text) as the JSON Schema document runs are checked against, options now. */
export async function surveySchemaOf(
  deps: Pick<Deps, 'db' | 'box' | 'config'>,
  where: Where,
  storedVars: string | null,
) {
  const vars = askedSurveyVars(templateSurveyVarsOf(parseJson<unknown>(storedVars, [])));
  const options = await resolveSurveyOptions(deps, where, vars);
  return { vars, doc: surveyJsonSchema(vars, options) };
}

const ajv = new Ajv2020({ allErrors: true });
addFormats(ajv);
for (const keyword of surveySchemaKeywords) ajv.addKeyword(keyword);

/** Compiled validators by their document's JSON text, least recently used first; at most `maxValidators`. */
const validators = new Map<string, { doc: JsonSchema; validate: ValidateFunction }>();
const maxValidators = 200;

/** The validator of a schema document, compiled once per document text (ajv's own cache is kept as small). */
export function surveyValidator(doc: JsonSchema): ValidateFunction {
  const key = JSON.stringify(doc);
  const hit = validators.get(key);
  if (hit) {
    validators.delete(key);
    validators.set(key, hit);
    return hit.validate;
  }
  const validate = ajv.compile(doc);
  validators.set(key, { doc, validate });
  while (validators.size > maxValidators) {
    const [oldest, entry] = validators.entries().next().value as [string, { doc: JsonSchema }];
    validators.delete(oldest);
    ajv.removeSchema(entry.doc);
  }
  return validate;
}

const decodePointer = (part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~');

/** Null, blank text, an empty list or object: no answer to a required variable. */
const isEmptyAnswer = (value: unknown) =>
  !isSurveyAnswered(value) ||
  (Array.isArray(value) && value.length === 0) ||
  (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

const typeCodes: Partial<Record<TemplateSurveyVar['type'], CodedMessage['code']>> = {
  int: 'not_integer',
  number: 'not_number',
  boolean: 'not_boolean',
  multiselect: 'not_list',
  kv: 'not_object',
};

/** The options a refused choice names: the first few values of the document's `oneOf`. */
function offeredValues(doc: JsonSchema, v: TemplateSurveyVar): string {
  const props = doc.properties as Record<string, JsonSchema>;
  const entry = ((doc.allOf as JsonSchema[] | undefined) ?? []).find(
    (e) => e['x-signalbox-field'] === v.name,
  );
  const rules = (
    (entry?.then as JsonSchema | undefined)?.properties as Record<string, JsonSchema> | undefined
  )?.[v.name] ??
    props[v.name] ?? { oneOf: [] };
  const choices = (v.type === 'multiselect' ? (rules.items as JsonSchema | undefined) : rules)?.oneOf as
    | { const: string }[]
    | undefined;
  const values = (choices ?? []).map((c) => c.const);
  return values.length > 10 ? `${values.slice(0, 10).join(', ')}, …` : values.join(', ');
}

/** The coded error of one refused answer, from the first of ajv's errors about it. */
function errorOf(
  doc: JsonSchema,
  v: TemplateSurveyVar,
  e: ErrorObject,
  value: unknown,
  deep: boolean,
): FieldError {
  const field = v.title || v.name;
  if (e.keyword === 'required' || (surveyMustAnswer(v) && isEmptyAnswer(value)))
    return coded('survey_var_required', { title: field });
  const limit = Number((e.params as { limit?: number }).limit);
  // A kv answer is an object of non-empty keys and text values: whatever else it misses is its format.
  if (v.type === 'kv' && (deep || ['propertyNames', 'minLength', 'additionalProperties'].includes(e.keyword)))
    return coded('invalid_format', { field });
  switch (e.keyword) {
    case 'type':
      if (deep) return v.type === 'kv' ? coded('invalid_format', { field }) : oneOf();
      return { code: typeCodes[v.type] ?? 'not_string', params: { field } };
    case 'minLength':
      return deep ? coded('invalid_format', { field }) : coded('too_short', { field, min: limit });
    case 'maxLength':
      return coded('too_long', { field, max: limit });
    case 'pattern':
      if (v.type === 'int') return coded('not_integer', { field });
      return v.regex_message
        ? coded('survey_regex_message', { field, message: v.regex_message })
        : coded('survey_pattern_mismatch', { field, pattern: v.regex ?? '' });
    case 'minimum':
      return coded('too_small', { field, min: limit });
    case 'maximum':
      return coded('too_large', { field, max: limit });
    case 'multipleOf':
      return coded('not_multiple_of', { field, step: Number(e.params.multipleOf) });
    case 'format':
      return v.type === 'date' ? coded('not_a_date', { field }) : coded('invalid_date_offset', { field });
    case 'const':
    case 'oneOf':
    case 'not':
      return oneOf();
    case 'minItems':
      return coded('too_few', { field, min: limit });
    case 'maxItems':
      return coded('too_many', { field, max: limit });
    case 'propertyNames':
    case 'additionalProperties':
      return coded('invalid_format', { field });
    default:
      return coded('invalid_value', { field });
  }
  function oneOf() {
    return coded('not_one_of', { field, options: offeredValues(doc, v) });
  }
}

/** The field errors (`survey.<name>`, in the survey's order) of answers the document refused. */
export function surveyFieldErrors(
  doc: JsonSchema,
  vars: TemplateSurveyVar[],
  errors: ErrorObject[],
  answers: Record<string, unknown>,
): Record<string, FieldError> {
  const byName = new Map(vars.map((v) => [v.name, v]));
  const found = new Map<string, FieldError>();
  for (const e of errors) {
    let name: string | undefined;
    let deep = false;
    if (e.keyword === 'required') name = String((e.params as { missingProperty: string }).missingProperty);
    else if (e.instancePath) {
      const parts = e.instancePath.split('/').slice(1).map(decodePointer);
      name = parts[0];
      deep = parts.length > 1;
    }
    const v = name === undefined ? undefined : byName.get(name);
    if (!v || found.has(v.name)) continue;
    found.set(v.name, errorOf(doc, v, e, answers[v.name], deep));
  }
  return Object.fromEntries(
    vars.filter((v) => found.has(v.name)).map((v) => [`survey.${v.name}`, found.get(v.name) as FieldError]),
  );
}

/** The verdict on a run's answers: valid, or the field errors (`survey.<name>`) that refuse it. */
export function checkSurveyAnswers(
  doc: JsonSchema,
  vars: TemplateSurveyVar[],
  answers: Record<string, unknown>,
): { valid: true } | { valid: false; fields: Record<string, FieldError> } {
  const validate = surveyValidator(doc);
  if (validate(answers)) return { valid: true };
  return { valid: false, fields: surveyFieldErrors(doc, vars, validate.errors ?? [], answers) };
}

/**
 * A person's run of a template: its survey answers (`environment` with the `secret` answers merged in) checked
 * against the survey's schema document with options resolved now (a value no longer offered is refused), a 400
 * with `survey.<name>` field errors otherwise. Then the defaults of required variables left unanswered are filled
 * in (typed; a secret's into the secret answers) and the values of hidden variables dropped. Returns the JSON
 * texts to store (unchanged when nothing changed).
 */
export async function surveyAnswersForRun(
  deps: Pick<Deps, 'db' | 'box' | 'config'>,
  where: Where,
  storedVars: string | null,
  environment: string | undefined,
  secret: string | undefined,
): Promise<{ environment: string | undefined; secret: string | undefined }> {
  const { vars, doc } = await surveySchemaOf(deps, where, storedVars);
  if (vars.length === 0) return { environment, secret };
  const env = parseJsonObject(environment);
  const sec = parseJsonObject(secret);
  const answers = { ...sec, ...env };
  const verdict = checkSurveyAnswers(doc, vars, answers);
  if (!verdict.valid) {
    const [first] = Object.values(verdict.fields);
    throw badRequest((first ?? coded('invalid_value', { field: 'environment' })) as never, verdict.fields);
  }
  const shown = surveyVisibility(vars, answers);
  let envChanged = false;
  let secretChanged = false;
  for (const v of vars) {
    if (!shown.get(v.name)) {
      if (Object.hasOwn(env, v.name)) {
        delete env[v.name];
        envChanged = true;
      }
      if (Object.hasOwn(sec, v.name)) {
        delete sec[v.name];
        secretChanged = true;
      }
      continue;
    }
    if (!v.required || isSurveyAnswered(answers[v.name]) || !isSurveyAnswered(v.default_value)) continue;
    if (v.type === 'secret') {
      setOwn(sec, v.name, v.default_value);
      secretChanged = true;
    } else {
      setOwn(env, v.name, typedSurveyDefault(v));
      envChanged = true;
    }
  }
  return {
    environment: envChanged ? JSON.stringify(env) : environment,
    secret: secretChanged ? JSON.stringify(sec) : secret,
  };
}
