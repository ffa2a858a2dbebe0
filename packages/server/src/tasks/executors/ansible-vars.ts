/**
 * The extra-vars file handed to ansible-playbook. Values a task supplies (its environment JSON, secret survey
 * values, task details such as its message) are data, never code: every string in them, keys included, carries
 * Ansible's `!unsafe` tag, so Jinja never evaluates `{{ lookup('pipe', …) }}` sent by a caller or a webhook.
 * Values the project's managers defined (the environment's own JSON and secrets) are written as they are.
 *
 * The file is YAML in flow style (JSON plus tags), written by hand because the tag has to sit on each string and
 * the output has to read the same under Ansible's YAML 1.1 loader: every string is double-quoted with
 * everything outside printable ASCII escaped, numbers keep a decimal point where 1.1 needs one.
 */

/** Marks a value (and everything inside it) as supplied by the task. */
export class Unsafe {
  constructor(readonly value: unknown) {}
}

function quote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else if (code >= 0xd800 && code <= 0xdfff)
      out += '\\uFFFD'; // a lone surrogate is not text
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

function number(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  const text = String(n);
  // YAML 1.1 reads "1e+21" as a string: a float needs a "." before its exponent.
  return /e/i.test(text) && !text.includes('.') ? text.replace(/e/i, '.0e') : text;
}

function write(value: unknown, unsafe: boolean): string {
  if (value instanceof Unsafe) return write(value.value, true);
  if (typeof value === 'string') return `${unsafe ? '!unsafe ' : ''}${quote(value)}`;
  if (typeof value === 'number') return number(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null || value === undefined || typeof value !== 'object') return 'null';
  if (Array.isArray(value)) return `[${value.map((v) => write(v, unsafe)).join(', ')}]`;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${unsafe ? '!unsafe ' : ''}${quote(k)}: ${write(v, unsafe)}`).join(', ')}}`;
}

/** The extra-vars document: top-level names are plain, values keep the tag their origin gives them. */
export function extraVarsYaml(vars: Record<string, unknown>): string {
  const entries = Object.entries(vars).filter(([, v]) => v !== undefined);
  return `{${entries.map(([k, v]) => `${quote(k)}: ${write(v, false)}`).join(',\n ')}}\n`;
}
