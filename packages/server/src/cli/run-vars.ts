import { type TemplateSurveyVar, typedSurveyDefault } from '@signalbox/contracts';
import { UsageError } from './errors';

/** The answers of a run as POST tasks takes them: secret survey variables in `secret`, the rest in `environment`. */
export type RunAnswers = { environment: Record<string, unknown>; secret: Record<string, unknown> };

/** Longest variable name the command sends (the server bounds the objects, this keeps the message readable). */
const MAX_NAME = 200;

/**
 * The answer to a survey variable from its text on the command line, typed as the survey's JSON Schema wants it: a
 * number for int and number, true / false for boolean, a list for multiselect (a JSON array, or the values
 * separated by commas), an object for kv (a JSON object); the text otherwise (the server then names the field
 * when the text does not fit).
 */
export function typedAnswer(v: Pick<TemplateSurveyVar, 'type'>, text: string): unknown {
  const typed = typedSurveyDefault({ type: v.type, default_value: text });
  if (v.type === 'multiselect' && !Array.isArray(typed))
    return text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  return typed;
}

/**
 * `--var name=value` options as a run's answers: a survey variable's value typed by its type (a secret one goes
 * to `secret`, stored sealed), any other name an extra variable as text. A name given twice, or an option without
 * `=`, is refused.
 */
export function runAnswers(options: readonly string[], survey: readonly TemplateSurveyVar[]): RunAnswers {
  const byName = new Map(survey.map((v) => [v.name, v]));
  // Objects without a prototype: a variable named __proto__ is a variable like any other.
  const environment: Record<string, unknown> = Object.create(null);
  const secret: Record<string, unknown> = Object.create(null);
  const seen = new Set<string>();
  for (const option of options) {
    const eq = option.indexOf('=');
    const name = eq < 0 ? '' : option.slice(0, eq).trim();
    if (!name) throw new UsageError('--var takes name=value (e.g. --var env=production)');
    if (name.length > MAX_NAME) throw new UsageError(`--var: the name is longer than ${MAX_NAME} characters`);
    if (seen.has(name)) throw new UsageError(`--var ${name} is given twice`);
    seen.add(name);
    const text = option.slice(eq + 1);
    const v = byName.get(name);
    if (v?.type === 'secret') secret[name] = text;
    else environment[name] = v ? typedAnswer(v, text) : text;
  }
  return { environment, secret };
}
