import type { CodedMessage } from './errors';
import type { SurveyOption, SurveyVarType, TemplateSurveyVar } from './surveys';

/** A JSON Schema (draft 2020-12) object, as this module writes one. */
export type JsonSchema = { [key: string]: unknown };

/** A survey's schema document (`surveyJsonSchema`). */
export type SurveySchemaDocument = JsonSchema & {
  $schema: 'https://json-schema.org/draft/2020-12/schema';
  type: 'object';
  properties: Record<string, JsonSchema>;
};

/** The options of one choice variable as the server resolved them: what it offers now, or why none could be had. */
export type SurveyOptionsOf = { options: SurveyOption[] } | { error: CodedMessage };

/**
 * The vendor keywords of a survey's schema document. A JSON Schema validator in strict mode (ajv's default) must
 * be told of them, e.g. `for (const k of surveySchemaKeywords) ajv.addKeyword(k)`; they never change a verdict.
 */
export const surveySchemaKeywords = [
  'x-signalbox-type',
  'x-signalbox-order',
  'x-signalbox-secret',
  'x-signalbox-required',
  'x-signalbox-visible-when',
  'x-signalbox-options-error',
  'x-signalbox-regex-message',
  'x-signalbox-field',
] as const;

/** The variables a survey really asks: those with a name, the first of each name. */
export function askedSurveyVars(vars: TemplateSurveyVar[]): TemplateSurveyVar[] {
  const seen = new Set<string>();
  return vars.filter((v) => {
    if (!v.name || seen.has(v.name)) return false;
    seen.add(v.name);
    return true;
  });
}

/** Whether a value answers a survey variable: absent, null and blank text do not. */
export const isSurveyAnswered = (value: unknown) =>
  value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');

/** A required variable with a default takes it when left unanswered (the server fills it in). */
const fillsDefault = (v: TemplateSurveyVar) => v.required && isSurveyAnswered(v.default_value);

/**
 * A variable's default (`default_value`, text) as the typed value its answer would be: a number for int (when it
 * is whole) and number, true / false for boolean, a list for multiselect (a JSON array), an object for kv (a JSON
 * object); the text itself otherwise, or when it does not read as its type.
 */
export function typedSurveyDefault(v: Pick<TemplateSurveyVar, 'type' | 'default_value'>): unknown {
  const text = v.default_value.trim();
  switch (v.type) {
    case 'int':
      return /^[-+]?\d+$/.test(text) ? Number(text) : v.default_value;
    case 'number': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) ? n : v.default_value;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : v.default_value;
    case 'multiselect':
    case 'kv': {
      try {
        const parsed: unknown = JSON.parse(text);
        const isList = Array.isArray(parsed);
        const isObject = parsed !== null && typeof parsed === 'object' && !isList;
        if (v.type === 'multiselect' ? isList : isObject) return parsed;
      } catch {
        // not JSON: the text as it is
      }
      return v.default_value;
    }
    default:
      return v.default_value;
  }
}

/**
 * The texts an answer is compared as by a visibility condition: a string itself, a number's shortest text
 * (`String(n)`), a boolean 'true' / 'false', each of a list's items of those kinds; nothing for anything else.
 */
export function surveyAnswerTexts(value: unknown): string[] {
  const scalar = (v: unknown): string[] =>
    typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
      ? [String(v)]
      : [];
  return Array.isArray(value) ? value.flatMap(scalar) : scalar(value);
}

/**
 * Which of the survey's variables are shown for these answers (a map by name). A variable with a `visible_when`
 * is shown while its `field` is shown and has one of the condition's values (`surveyAnswerTexts`); that field's
 * answer is the one given, or its default when it is required, unanswered and has one. A condition on a name
 * that is not an earlier variable of the survey compares the answers' value of that name as given.
 * The same rule as the schema document's `allOf` conditions.
 */
export function surveyVisibility(vars: TemplateSurveyVar[], answers: Record<string, unknown>) {
  const asked = askedSurveyVars(vars);
  const shown = new Map<string, boolean>();
  const effective = new Map<string, unknown>();
  for (const v of asked) {
    let visible = true;
    const when = v.visible_when;
    if (when) {
      const earlier = shown.has(when.field);
      const value = earlier ? effective.get(when.field) : answers[when.field];
      const present = earlier
        ? shown.get(when.field) && value !== undefined
        : Object.hasOwn(answers, when.field);
      visible = Boolean(present) && surveyAnswerTexts(value).some((t) => when.values.includes(t));
    }
    shown.set(v.name, visible);
    const given = Object.hasOwn(answers, v.name) ? answers[v.name] : undefined;
    effective.set(
      v.name,
      !visible ? undefined : !isSurveyAnswered(given) && fillsDefault(v) ? typedSurveyDefault(v) : given,
    );
  }
  return shown;
}

/** What an unanswered value is, as a schema: null or blank text (an absent one is not looked at). */
const unansweredValue: JsonSchema = {
  anyOf: [{ type: 'null' }, { type: 'string', pattern: '^\\s*$' }],
};

/** The values, as a schema, whose texts (`surveyAnswerTexts`) include one of `values`. */
function matchingValues(values: string[]): JsonSchema {
  const scalars: unknown[] = [...values];
  for (const v of values) {
    const n = Number(v);
    if (v.trim() !== '' && Number.isFinite(n) && String(n) === v) scalars.push(n);
    if (v === 'true' || v === 'false') scalars.push(v === 'true');
  }
  return { anyOf: [{ enum: scalars }, { type: 'array', contains: { enum: scalars } }] };
}

/** A regular expression as JSON Schema validators compile it (ECMAScript, unicode): null when it does not. */
function usablePattern(regex: string | null): string | null {
  if (!regex) return null;
  try {
    new RegExp(regex, 'u');
    return regex;
  } catch {
    return null;
  }
}

/** An int without bounds or step accepts its answer as text too (`"5"`), as Semaphore's clients send it. */
const isPlainInt = (v: TemplateSurveyVar) => v.min === null && v.max === null && !(v.step && v.step > 0);

/** The rules a variable's answer follows while it is shown: the keywords that validate. */
function rulesOf(v: TemplateSurveyVar, options: SurveyOptionsOf | undefined, mustAnswer: boolean) {
  const rules: JsonSchema = {};
  const bounds = () => {
    if (v.min !== null) rules.minimum = v.min;
    if (v.max !== null) rules.maximum = v.max;
    if (v.step !== null && v.step > 0) rules.multipleOf = v.step;
  };
  const lengths = () => {
    if (v.min_length !== null) rules.minLength = v.min_length;
    if (v.max_length !== null) rules.maxLength = v.max_length;
  };
  const offered = (): JsonSchema => {
    const list = options && 'options' in options ? options.options : [];
    const seen = new Set<string>();
    const unique = list.filter((o) => !seen.has(o.value) && seen.add(o.value));
    return unique.length ? { oneOf: unique.map((o) => ({ const: o.value, title: o.label })) } : { not: {} };
  };
  switch (v.type) {
    case 'int':
      if (isPlainInt(v)) {
        // Blank text is no answer: refused when one must be given.
        const digits = mustAnswer ? '^\\s*[-+]?\\d+\\s*$' : '^\\s*(?:[-+]?\\d+)?\\s*$';
        rules.anyOf = [{ type: 'integer' }, { type: 'string', pattern: digits }];
      } else {
        rules.type = 'integer';
        bounds();
      }
      break;
    case 'number':
      rules.type = 'number';
      bounds();
      break;
    case 'boolean':
      rules.type = 'boolean';
      break;
    case 'enum':
      rules.type = 'string';
      Object.assign(rules, offered());
      break;
    case 'multiselect':
      rules.type = 'array';
      rules.items = { type: 'string', ...offered() };
      rules.uniqueItems = true;
      if (v.min_selected !== null || mustAnswer)
        rules.minItems = Math.max(v.min_selected ?? 0, mustAnswer ? 1 : 0);
      if (v.max_selected !== null) rules.maxItems = v.max_selected;
      break;
    case 'date':
      rules.type = 'string';
      rules.format = 'date';
      break;
    case 'datetime':
      rules.type = 'string';
      rules.format = 'date-time';
      break;
    case 'kv':
      rules.type = 'object';
      rules.propertyNames = { minLength: 1 };
      rules.additionalProperties = { type: 'string' };
      if (mustAnswer) rules.minProperties = 1;
      break;
    case 'secret':
      rules.type = 'string';
      rules.writeOnly = true;
      lengths();
      break;
    default: {
      rules.type = 'string';
      lengths();
      const pattern = usablePattern(v.regex);
      if (pattern) rules.pattern = pattern;
    }
  }
  // Blank text does not answer a required variable (null, an empty list or object fail its type or bounds).
  if (mustAnswer && rules.type === 'string') rules.not = { pattern: '^\\s*$' };
  return rules;
}

/** The keywords that only describe a variable for a form. */
function annotationsOf(
  v: TemplateSurveyVar,
  order: number,
  options: SurveyOptionsOf | undefined,
): JsonSchema {
  const out: JsonSchema = {
    title: v.title || v.name,
    'x-signalbox-type': v.type,
    'x-signalbox-order': order,
    'x-signalbox-secret': v.type === 'secret',
    'x-signalbox-required': v.required,
    'x-signalbox-visible-when': v.visible_when,
  };
  if (v.description) out.description = v.description;
  if (isSurveyAnswered(v.default_value) && v.type !== 'secret') out.default = typedSurveyDefault(v);
  if (v.type === 'secret') out.writeOnly = true;
  if (v.regex && v.regex_message) out['x-signalbox-regex-message'] = v.regex_message;
  if (options && 'error' in options) out['x-signalbox-options-error'] = options.error;
  return out;
}

/** The condition, on the whole answers object, under which a variable is shown (true: always). */
function shownWhen(v: TemplateSurveyVar, earlier: Map<string, TemplateSurveyVar>): JsonSchema | true {
  const when = v.visible_when;
  if (!when) return true;
  const field = earlier.get(when.field);
  const matches = matchingValues(when.values);
  if (!field) return { properties: { [when.field]: matches }, required: [when.field] };
  const fieldShown = shownWhen(field, earlier);
  const byDefault =
    fillsDefault(field) && surveyAnswerTexts(typedSurveyDefault(field)).some((t) => when.values.includes(t));
  const answered: JsonSchema = fillsDefault(field)
    ? {
        properties: { [when.field]: { allOf: [matches, { not: unansweredValue }] } },
        required: [when.field],
      }
    : { properties: { [when.field]: matches }, required: [when.field] };
  const value: JsonSchema = byDefault
    ? {
        anyOf: [
          answered,
          { not: { required: [when.field] } },
          { properties: { [when.field]: unansweredValue }, required: [when.field] },
        ],
      }
    : answered;
  return fieldShown === true ? value : { allOf: [fieldShown, value] };
}

/**
 * The survey as a JSON Schema (draft 2020-12) document, for the run form to render and for validators (the
 * server's and any client's) to check a run's answers with: `environment` with the `secret` answers merged in.
 * The document alone gives the server's verdict (apart from options, resolved when it is built): a plain
 * validator (ajv 8 with ajv-formats, the vendor keywords `surveySchemaKeywords` added) accepts exactly what the
 * server accepts.
 *
 * ```jsonc
 * {
 *   "$schema": "https://json-schema.org/draft/2020-12/schema",
 *   "type": "object",                     // other keys are allowed: a run carries extra variables too
 *   "properties": {
 *     "<name>": {                         // one per variable (the first of each name), in any key order
 *       "title": "…",                     // the variable's title (its name when it has none)
 *       "description": "…",               // when it has one
 *       "default": <typed>,               // when it has one (never a secret's): a number for int / number, a
 *                                         // boolean, a list of values (multiselect), an object of strings (kv)
 *       "writeOnly": true,                // secret: never shown again
 *       "x-signalbox-type": "string",     // surveyVarTypes: what widget to render
 *       "x-signalbox-order": 0,           // its position in the survey: render in this order
 *       "x-signalbox-secret": false,      // true for a secret: send its answer in the task's `secret`
 *       "x-signalbox-required": false,    // the variable is marked required (the form may show it so)
 *       "x-signalbox-visible-when": null, // or { "field": "<name>", "values": ["…"] }: see surveyVisibility
 *       "x-signalbox-regex-message": "…", // what to say when `pattern` is missed (when the template has one)
 *       "x-signalbox-options-error": { "code": "…", "params": {} }, // an options source failed: nothing offered
 *       // …and, ONLY for a variable WITHOUT `x-signalbox-visible-when`, its rules (below).
 *     }
 *   },
 *   "required": ["<name>", …],           // required variables without visibility condition or default
 *   "allOf": [                            // one entry per variable WITH a visibility condition
 *     { "x-signalbox-field": "<name>",
 *       "if": { …the condition, on the whole answers object… },
 *       "then": { "properties": { "<name>": { …its rules… } }, "required": ["<name>"] } }  // required: when it must be answered
 *   ]
 * }
 * ```
 *
 * A variable's rules (`surveyFieldSchema` gives the annotations and rules of one variable merged):
 * - '' / string / text: `type: "string"`, `minLength`, `maxLength`, `pattern` (the template's regex, ECMAScript,
 *   unanchored; left out when it does not compile with the `u` flag);
 * - secret: `type: "string"`, `minLength`, `maxLength`, `writeOnly`;
 * - int: `type: "integer"`, `minimum`, `maximum`, `multipleOf` (the step); an int with none of them (Semaphore's)
 *   also takes a whole number as text: `anyOf: [{ "type": "integer" }, { "type": "string", "pattern": <digits> }]`
 *   (blank text allowed unless it must be answered);
 * - number: `type: "number"`, `minimum`, `maximum`, `multipleOf`;
 * - boolean: `type: "boolean"`;
 * - enum: `type: "string"`, `oneOf: [{ "const": value, "title": label }, …]` (the options offered now, by value,
 *   first label kept); `not: {}` when nothing is offered (an options error, or an empty source);
 * - multiselect: `type: "array"`, `items: { "type": "string", "oneOf": […] }` (`not: {}` for `oneOf` when
 *   nothing is offered), `uniqueItems: true`, `minItems`
 *   (min_selected), `maxItems` (max_selected);
 * - date: `type: "string"`, `format: "date"` (YYYY-MM-DD); datetime: `format: "date-time"` (RFC 3339: with offset);
 * - kv: `type: "object"`, `additionalProperties: { "type": "string" }`, `propertyNames: { "minLength": 1 }`.
 * A required variable without a default must be present and, when its `type` is "string", also holds
 * `not: { "pattern": "^\\s*$" }` (blank text is no answer); for a multiselect `minItems` ≥ 1, for a kv
 * `minProperties: 1`. A required variable WITH a default may be left out (or
 * answered with blank text where its rules take text): the server fills its default in. An optional variable is answered by leaving it out (null is
 * not an answer the rules take: send nothing). A hidden variable (its condition false) is neither required nor
 * checked, and the server drops its value. Steps follow JSON Schema's `multipleOf` as ajv computes it by default.
 */
export function surveyJsonSchema(
  vars: TemplateSurveyVar[],
  options: Map<string, SurveyOptionsOf>,
): SurveySchemaDocument {
  // Entries, not assignments: a variable may be named `__proto__`.
  const properties: [string, JsonSchema][] = [];
  const required: string[] = [];
  const allOf: JsonSchema[] = [];
  const earlier = new Map<string, TemplateSurveyVar>();
  askedSurveyVars(vars).forEach((v, order) => {
    const offered = options.get(v.name);
    const mustAnswer = v.required && !fillsDefault(v);
    const rules = rulesOf(v, offered, mustAnswer);
    const annotations = annotationsOf(v, order, offered);
    const condition = shownWhen(v, earlier);
    if (condition === true) {
      properties.push([v.name, { ...annotations, ...rules }]);
      if (mustAnswer) required.push(v.name);
    } else {
      properties.push([v.name, annotations]);
      allOf.push({
        'x-signalbox-field': v.name,
        if: condition,
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword; the entry is data, never awaited
        then: { properties: { [v.name]: rules }, ...(mustAnswer ? { required: [v.name] } : {}) },
      });
    }
    earlier.set(v.name, v);
  });
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: Object.fromEntries(properties),
    ...(required.length ? { required } : {}),
    ...(allOf.length ? { allOf } : {}),
  };
}

/** Whether a variable's answer must be given (required, no default to fill in): `required` lists it. */
export const surveyMustAnswer = (v: TemplateSurveyVar) => v.required && !fillsDefault(v);

/**
 * One variable of a survey's schema document with its annotations and rules merged (a conditional variable's
 * rules are in its `allOf` entry): what a form renders the field from. Undefined for an unknown name.
 */
export function surveyFieldSchema(doc: JsonSchema, name: string): JsonSchema | undefined {
  const properties = doc.properties as Record<string, JsonSchema> | undefined;
  const own = properties?.[name];
  if (!own) return undefined;
  const entry = ((doc.allOf as JsonSchema[] | undefined) ?? []).find((e) => e['x-signalbox-field'] === name);
  const then = entry?.then as { properties?: Record<string, JsonSchema> } | undefined;
  return { ...own, ...(then?.properties?.[name] ?? {}) };
}

/** The variables of a survey's schema document in their order, each merged as `surveyFieldSchema` does. */
export function surveyFields(doc: JsonSchema): { name: string; schema: JsonSchema; type: SurveyVarType }[] {
  const properties = (doc.properties as Record<string, JsonSchema> | undefined) ?? {};
  return Object.keys(properties)
    .map((name) => ({ name, schema: surveyFieldSchema(doc, name) as JsonSchema }))
    .sort((a, b) => Number(a.schema['x-signalbox-order']) - Number(b.schema['x-signalbox-order']))
    .map((f) => ({ ...f, type: f.schema['x-signalbox-type'] as SurveyVarType }));
}
