import { z } from 'zod';
import { flag, requiredString } from './common';
import { issue } from './errors';

// A template's survey: the questions a run asks. Each variable keeps Semaphore's fields (name, title, description,
// type, required, values, default_value) with their meaning, so Semaphore clients and backups read and write it
// as before; the typed fields below are optional and absent for a Semaphore survey.

/**
 * Survey variable types. Semaphore's: '' and 'string' (one line of text), 'int' (a whole number), 'secret'
 * (hidden, never shown again), 'enum' (one of a list). Signalbox's: 'text' (several lines), 'number' (any
 * number), 'boolean', 'multiselect' (some of a list), 'date' (YYYY-MM-DD), 'datetime' (an ISO 8601 time with its
 * offset) and 'kv' (a list of key/value pairs, given as an object of strings).
 */
export const surveyVarTypes = [
  '',
  'string',
  'int',
  'secret',
  'enum',
  'text',
  'number',
  'boolean',
  'multiselect',
  'date',
  'datetime',
  'kv',
] as const;
export type SurveyVarType = (typeof surveyVarTypes)[number];

/** Types answered by choosing from options (fixed `values`, or an `options_source`). */
export const choiceTypes: readonly SurveyVarType[] = ['enum', 'multiselect'];
/** Types with a length (min_length / max_length) and, but for secret, a pattern. */
export const textTypes: readonly SurveyVarType[] = ['', 'string', 'text', 'secret'];
/** Types with min / max / step. */
export const numberTypes: readonly SurveyVarType[] = ['int', 'number'];

/**
 * Where a choice variable's options come from when it has no fixed `values`: resolved by the server when the run
 * dialog opens and again when the run is submitted (a value no longer offered is refused).
 * - `inventory_hosts` / `inventory_groups`: the hosts or groups of one of the project's inventories;
 * - `option_list`: the values of one of the project's option lists;
 * - `task_outputs`: one output (by name) of the template's last successful task: a list, or a single value;
 * - `http`: a JSON document fetched by the server (http or https, a timeout, a size cap, no private addresses
 *   unless an administrator allows them), with a JSONPath to the items and, within each item, to its value and
 *   label (the item itself when absent); credentials from a project key of type login_password (basic auth).
 */
export const optionsSourceSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('inventory_hosts'), inventory_id: z.number().int().positive() }),
  z.strictObject({ type: z.literal('inventory_groups'), inventory_id: z.number().int().positive() }),
  z.strictObject({ type: z.literal('option_list'), option_list_id: z.number().int().positive() }),
  z.strictObject({ type: z.literal('task_outputs'), output: requiredString(255) }),
  z.strictObject({
    type: z.literal('http'),
    url: requiredString(2048),
    items_path: z.string().trim().max(500).default('$[*]'),
    value_path: z.string().trim().max(500).default(''),
    label_path: z.string().trim().max(500).default(''),
    key_id: z
      .number()
      .int()
      .positive()
      .nullish()
      .transform((v) => v ?? null),
  }),
]);
export type OptionsSource = z.infer<typeof optionsSourceSchema>;

/**
 * Shows a variable only while another variable of the survey (`field`, earlier in the list) has one of `values`
 * (compared as text: 'true' / 'false' for a boolean; any selected option of a multiselect counts). A hidden
 * variable is neither asked nor required, and a value sent for it is ignored.
 */
export const visibleWhenSchema = z.strictObject({
  field: requiredString(100),
  values: z.array(z.string().max(1000)).min(1).max(100),
});
export type VisibleWhen = z.infer<typeof visibleWhenSchema>;

const text = (max: number) =>
  z
    .string()
    .max(max)
    .nullish()
    .transform((v) => v ?? '');
const count = () =>
  z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .nullish()
    .transform((v) => v ?? null);
const bound = () =>
  z
    .number()
    .finite()
    .nullish()
    .transform((v) => v ?? null);

const surveyValue = z.object({
  name: z
    .string()
    .trim()
    .max(255)
    .nullish()
    .transform((v) => v ?? ''),
  value: text(1000),
});

/** The typed fields of a survey variable, all optional (null: no such rule). */
const typedFields = {
  /** Text types: the answer's length in characters. */
  min_length: count(),
  max_length: count(),
  /** string / text: a regular expression (ECMAScript, unanchored unless it anchors itself) the answer matches. */
  regex: z
    .string()
    .max(1000)
    .nullish()
    .transform((v) => (v ? v : null)),
  /** What the form says when the answer does not match `regex` (the rule itself otherwise). */
  regex_message: text(255),
  /** int / number: bounds (inclusive) and step (an answer is a multiple of it, as JSON Schema's multipleOf). */
  min: bound(),
  max: bound(),
  step: bound(),
  /** multiselect: how many options must and may be chosen. */
  min_selected: count(),
  max_selected: count(),
  options_source: optionsSourceSchema.nullish().transform((v) => v ?? null),
  visible_when: visibleWhenSchema.nullish().transform((v) => v ?? null),
};

/** A survey variable as a template is saved with it (POST/PUT templates, restore). */
export const surveyVarSchema = z
  .object({
    name: requiredString(100),
    title: requiredString(255),
    description: text(1000),
    type: z
      .enum(surveyVarTypes)
      .nullish()
      .transform((v) => v ?? ''),
    required: flag(),
    /** The options of a choice variable: `name` is shown, `value` is the answer. */
    values: z
      .array(surveyValue)
      .max(200)
      .nullish()
      .transform((v) => v ?? []),
    /**
     * The default answer as text (Semaphore's field): a number's digits, 'true' / 'false', a multiselect's JSON
     * array of values, a kv's JSON object.
     */
    default_value: text(1000),
    ...typedFields,
  })
  .superRefine((v, ctx) => {
    if (v.type !== 'enum' && v.type !== 'multiselect') return;
    if (v.options_source) {
      if (v.values.length > 0)
        ctx.addIssue({ code: 'custom', message: issue('survey_values_or_source'), path: ['values'] });
      return;
    }
    if (v.values.length === 0) {
      ctx.addIssue({ code: 'custom', message: issue('enum_needs_values'), path: ['values'] });
      return;
    }
    if (v.values.some((item) => item.name === '')) {
      ctx.addIssue({ code: 'custom', message: issue('enum_empty_name'), path: ['values'] });
      return;
    }
    if (new Set(v.values.map((item) => item.name)).size !== v.values.length)
      ctx.addIssue({ code: 'custom', message: issue('enum_unique_names'), path: ['values'] });
  });
export type SurveyVar = z.infer<typeof surveyVarSchema>;

/** A survey variable as the API answers it (every typed field present, null when unused). */
export const templateSurveyVarSchema = z.strictObject({
  name: z.string(),
  title: z.string(),
  description: z.string(),
  type: z.enum(surveyVarTypes).describe('See surveyVarTypes.'),
  required: z.boolean(),
  values: z
    .array(z.strictObject({ name: z.string(), value: z.string() }))
    .describe('The fixed options of an enum or multiselect.'),
  default_value: z.string(),
  min_length: z.number().int().nullable(),
  max_length: z.number().int().nullable(),
  regex: z.string().nullable(),
  regex_message: z.string(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  step: z.number().nullable(),
  min_selected: z.number().int().nullable(),
  max_selected: z.number().int().nullable(),
  options_source: optionsSourceSchema.nullable(),
  visible_when: visibleWhenSchema.nullable(),
});
export type TemplateSurveyVar = z.infer<typeof templateSurveyVarSchema>;

/** One option of a choice variable, as the survey's JSON Schema offers it (`oneOf` of `const` with `title`). */
export type SurveyOption = { value: string; label: string };

/**
 * GET /api/project/{project_id}/templates/{template_id}/survey-schema: the survey as a JSON Schema (draft 2020-12)
 * document, options resolved. It validates what a run's `environment` (with the `secret` answers merged in) may
 * hold: the server checks a run against it. Vendor keywords carry what JSON Schema cannot say:
 * `x-signalbox-type` (the variable's type), `x-signalbox-order` (its position), `x-signalbox-secret`,
 * `x-signalbox-required`, `x-signalbox-visible-when` (the condition), `x-signalbox-regex-message`,
 * `x-signalbox-options-error` (a coded error when an options source could not be resolved: the variable then
 * offers nothing), `x-signalbox-field` (names the variable of an `allOf` condition entry). The exact shape, rule
 * by rule: `surveyJsonSchema` in survey-schema.ts; `surveyFields` reads the document back field by field.
 */
export const surveySchemaDocument = z
  .looseObject({
    $schema: z.literal('https://json-schema.org/draft/2020-12/schema'),
    type: z.literal('object'),
    properties: z.record(z.string(), z.looseObject({})),
  })
  .describe("The template's survey as a JSON Schema (draft 2020-12) document.");

/** A new survey variable as the editor starts it: a one-line text answer, no rules. */
export const emptySurveyVar: TemplateSurveyVar = {
  name: '',
  title: '',
  description: '',
  type: 'string',
  required: false,
  values: [],
  default_value: '',
  min_length: null,
  max_length: null,
  regex: null,
  regex_message: '',
  min: null,
  max: null,
  step: null,
  min_selected: null,
  max_selected: null,
  options_source: null,
  visible_when: null,
};
