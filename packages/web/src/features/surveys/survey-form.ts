import {
  type CodedMessage,
  isErrorCode,
  type SurveyOption,
  type SurveyVarType,
  surveyFieldSchema,
  surveyVarTypes,
  type VisibleWhen,
} from '@signalbox/contracts';

/**
 * The run form of a survey, read from its JSON Schema document (GET …/survey-schema, or the editor's preview built
 * in the browser): one field per property in `x-signalbox-order`, shown by `x-signalbox-type`. The form keeps each
 * answer in the shape its input edits (see `Answer`) and sends it typed (`surveyBody`); the server checks it.
 */

/** One question of the run form. */
export type SurveyField = {
  name: string;
  type: SurveyVarType;
  title: string;
  description: string;
  required: boolean;
  secret: boolean;
  /** The options of a choice variable (empty when a source offered none); null for other types. */
  options: SurveyOption[] | null;
  /** Why the options source offered nothing, when it failed. */
  optionsError: CodedMessage | null;
  visibleWhen: VisibleWhen | null;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  step?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
};

/** A key/value row of a kv answer. */
export type KvRow = { key: string; value: string };
/**
 * An answer as its input edits it: text (text types, enum, numbers as typed, date, datetime-local), a boolean, the
 * selected values of a multiselect, or the rows of a kv.
 */
export type Answer = string | boolean | string[] | KvRow[];
export type Answers = Record<string, Answer>;

type Prop = Record<string, unknown>;
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const isObject = (v: unknown): v is Prop => !!v && typeof v === 'object' && !Array.isArray(v);

/** The `oneOf` / `anyOf` of `{const, title}` (or a plain `enum`) of a property or of its items. */
function readOptions(prop: Prop): SurveyOption[] {
  const from = (node: unknown): SurveyOption[] | undefined => {
    if (!isObject(node)) return undefined;
    const list = (node.oneOf ?? node.anyOf) as unknown;
    if (Array.isArray(list))
      return list.filter(isObject).map((o) => ({
        value: String(o.const ?? ''),
        label: str(o.title) ?? String(o.const ?? ''),
      }));
    if (Array.isArray(node.enum)) return node.enum.map((v) => ({ value: String(v), label: String(v) }));
    return undefined;
  };
  return from(prop) ?? from(prop.items) ?? [];
}

function readOptionsError(value: unknown): CodedMessage | null {
  if (isObject(value) && typeof value.code === 'string' && isErrorCode(value.code))
    return {
      code: value.code,
      params: isObject(value.params) ? (value.params as CodedMessage['params']) : {},
    };
  return null;
}

function readVisibleWhen(value: unknown): VisibleWhen | null {
  if (!isObject(value) || typeof value.field !== 'string' || !Array.isArray(value.values)) return null;
  return { field: value.field, values: value.values.map(String) };
}

const knownType = (v: unknown): SurveyVarType =>
  typeof v === 'string' && (surveyVarTypes as readonly string[]).includes(v)
    ? (v as SurveyVarType)
    : 'string';

/**
 * The fields of a survey's JSON Schema document, in their order. A conditional field's rules sit in the document's
 * `allOf` entry for it: `surveyFieldSchema` merges them into its property.
 */
export function formFields(doc: unknown): SurveyField[] {
  if (!isObject(doc) || !isObject(doc.properties)) return [];
  const required = new Set(Array.isArray(doc.required) ? doc.required.map(String) : []);
  const entries = Object.keys(doc.properties)
    .map((name): [string, unknown] => [name, surveyFieldSchema(doc, name)])
    .filter((e): e is [string, Prop] => isObject(e[1]));
  return entries
    .map(([name, prop], index) => {
      const type = knownType(prop['x-signalbox-type']);
      const field: SurveyField = {
        name,
        type: type === '' ? 'string' : type,
        title: str(prop.title) ?? name,
        description: str(prop.description) ?? '',
        required: prop['x-signalbox-required'] === true || required.has(name),
        secret: prop['x-signalbox-secret'] === true || type === 'secret',
        options: type === 'enum' || type === 'multiselect' ? readOptions(prop) : null,
        optionsError: readOptionsError(prop['x-signalbox-options-error']),
        visibleWhen: readVisibleWhen(prop['x-signalbox-visible-when']),
        minLength: num(prop.minLength),
        maxLength: num(prop.maxLength),
        pattern: str(prop.pattern),
        minimum: num(prop.minimum),
        maximum: num(prop.maximum),
        step: num(prop.multipleOf),
        minItems: num(prop.minItems),
        maxItems: num(prop.maxItems),
        default: prop.default,
      };
      return { field, order: num(prop['x-signalbox-order']) ?? index };
    })
    .sort((a, b) => a.order - b.order)
    .map((e) => e.field);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO 8601 time as a datetime-local input shows it (the browser's time zone). */
export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local input's value as an ISO 8601 time with the browser's offset. */
export function fromLocalInput(local: string): string {
  const d = new Date(local);
  if (!local || Number.isNaN(d.getTime())) return local;
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  const seconds = pad(d.getSeconds());
  return `${local.length === 16 ? `${local}:${seconds}` : local}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** A typed value (a default, or an earlier run's answer) as the field's input edits it. */
export function toAnswer(field: SurveyField, value: unknown): Answer {
  switch (field.type) {
    case 'boolean':
      return value === true || value === 'true';
    case 'multiselect': {
      let list = value;
      if (typeof value === 'string') {
        try {
          list = JSON.parse(value);
        } catch {
          list = value ? [value] : [];
        }
      }
      return Array.isArray(list) ? list.map(String) : [];
    }
    case 'kv': {
      let obj = value;
      if (typeof value === 'string') {
        try {
          obj = JSON.parse(value);
        } catch {
          obj = {};
        }
      }
      return isObject(obj) ? Object.entries(obj).map(([key, v]) => ({ key, value: String(v ?? '') })) : [];
    }
    case 'datetime':
      return typeof value === 'string' && value ? toLocalInput(value) : '';
    default:
      return value === null || value === undefined ? '' : String(value);
  }
}

/** The answers a new run starts from: each field's default. */
export function initialAnswers(fields: SurveyField[], earlier?: Record<string, unknown>): Answers {
  return Object.fromEntries(
    fields.map((f) => [
      f.name,
      toAnswer(f, earlier && !f.secret && f.name in earlier ? earlier[f.name] : f.default),
    ]),
  );
}

/** An answer as text for a visibility condition: 'true' / 'false' for a boolean, each selected option. */
function answerTexts(answer: Answer | undefined): string[] {
  if (answer === undefined) return [];
  if (typeof answer === 'boolean') return [String(answer)];
  if (Array.isArray(answer)) return answer.map((a) => (typeof a === 'string' ? a : a.key));
  return [answer];
}

/**
 * The names of the fields shown for these answers: a field with a condition shows while the field it names is shown
 * and has one of its values.
 */
export function visibleFields(fields: SurveyField[], answers: Answers): Set<string> {
  const shown = new Set<string>();
  for (const f of fields) {
    const when = f.visibleWhen;
    if (!when) {
      shown.add(f.name);
      continue;
    }
    if (!shown.has(when.field)) continue;
    const texts = answerTexts(answers[when.field]);
    if (texts.some((text) => when.values.includes(text))) shown.add(f.name);
  }
  return shown;
}

/** An answer typed for the run, or undefined when there is none to send. */
export function typedAnswer(field: SurveyField, answer: Answer | undefined): unknown {
  if (answer === undefined) return undefined;
  switch (field.type) {
    case 'boolean':
      return answer === true;
    case 'multiselect':
      return Array.isArray(answer) && answer.length > 0 ? answer : undefined;
    case 'kv': {
      const rows = (Array.isArray(answer) ? answer : []) as KvRow[];
      const filled = rows.filter((r) => r.key.trim() !== '' || r.value !== '');
      return filled.length > 0 ? Object.fromEntries(filled.map((r) => [r.key.trim(), r.value])) : undefined;
    }
    case 'int':
    case 'number': {
      const text = String(answer).trim();
      if (text === '') return undefined;
      const n = Number(text);
      // Not a number: sent as typed, so the server names the problem at the field.
      return Number.isFinite(n) ? n : text;
    }
    case 'datetime': {
      const text = String(answer).trim();
      return text === '' ? undefined : fromLocalInput(text);
    }
    default: {
      // Semaphore's one-line answers are sent trimmed, as they always were; several lines are kept as written.
      const text = field.type === 'text' ? String(answer) : String(answer).trim();
      return text.trim() === '' ? undefined : text;
    }
  }
}

/**
 * The run's survey answers: the shown fields' typed answers, secret ones apart. Hidden fields and empty answers are
 * not sent (the server says which required ones are missing).
 */
export function surveyBody(fields: SurveyField[], answers: Answers) {
  const shown = visibleFields(fields, answers);
  const environment: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  for (const f of fields) {
    if (!shown.has(f.name)) continue;
    const value = typedAnswer(f, answers[f.name]);
    if (value === undefined) continue;
    (f.secret ? secret : environment)[f.name] = value;
  }
  return { environment, secret };
}
