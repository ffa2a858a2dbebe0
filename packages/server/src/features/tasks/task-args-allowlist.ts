import { type Coded, coded } from '@signalbox/contracts';

/**
 * The CLI options a task may add without the manageProjectResources permission, per app: options that change
 * what a run does to its hosts or stack, never which files, inventories, keys, modules or commands it uses.
 * Every token must be one of these options or the value that follows one; anything else (a positional that
 * would be read as a second playbook, -i, --vault-password-file, -chdir, -var-file…) is refused. The forms
 * accepted match how each tool parses them (argparse for Ansible, Go's flag package for Terraform/OpenTofu,
 * pflag for Pulumi), so no token can mean something else to the tool than it meant here.
 */

type ValueCheck = (value: string) => string | null;
type Option = {
  /** Checks the option's value; absent for a flag without one. */
  value?: ValueCheck;
  /** `name=value` is accepted (long options; every Go flag). */
  joined?: boolean;
  /** `name value` is accepted (the value must not start with "-"). */
  separate?: boolean;
  /** A boolean flag that may also be written `name=true` / `name=false`. */
  bool?: boolean;
};
type Rules = Record<string, Option>;

const any: ValueCheck = (v) => (v === '' ? 'needs a value' : null);
const digits: ValueCheck = (v) => (/^\d{1,4}$/.test(v) ? null : 'must be a number');
const notFromFile: ValueCheck = (v) =>
  v.startsWith('@') ? 'must not start with "@" (a file on the server)' : any(v);
const JINJA = /\{[{%#]/;
const ANSIBLE_RESERVED = /^(ansible_|semaphore_vars$)/i;

/** Ansible variable names only managers may set from a task: connection settings and the server's own vars. */
export const isReservedAnsibleVar = (name: string) => ANSIBLE_RESERVED.test(name);

/** -e: inline JSON or one key=value, never @file, no Jinja, no ansible_ / semaphore_vars names. */
const extraVars: ValueCheck = (v) => {
  if (v.startsWith('@')) return 'must not start with "@" (a file on the server)';
  if (JINJA.test(v)) return 'must not contain a Jinja template ({{, {% or {#)';
  let names: string[];
  if (v.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      return 'must be key=value or a JSON object';
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return 'must be a JSON object';
    names = Object.keys(parsed);
  } else {
    const kv = /^([A-Za-z_][A-Za-z0-9_]*)=[^\s'"\\]*$/.exec(v);
    if (!kv) return 'must be one key=value (no spaces or quotes) or a JSON object';
    names = kv[1] ? [kv[1]] : [];
  }
  const reserved = names.find(isReservedAnsibleVar);
  return reserved ? `must not set ${JSON.stringify(reserved)}` : null;
};

const long = (value: ValueCheck): Option => ({ value, joined: true, separate: true });
const short = (value: ValueCheck): Option => ({ value, separate: true });

const ansible: Rules = {
  '--check': {},
  '-C': {},
  '--diff': {},
  '-D': {},
  '--verbose': {},
  ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`-${'v'.repeat(n)}`, {}])),
  '--list-hosts': {},
  '--list-tasks': {},
  '--list-tags': {},
  '--syntax-check': {},
  '--flush-cache': {},
  '--force-handlers': {},
  '--limit': long(notFromFile),
  '-l': short(notFromFile),
  '--tags': long(any),
  '-t': short(any),
  '--skip-tags': long(any),
  '--forks': long(digits),
  '-f': short(digits),
  '--start-at-task': long(any),
  '--extra-vars': long(extraVars),
  '-e': short(extraVars),
};

const tfVar: ValueCheck = (v) =>
  /^[A-Za-z_][A-Za-z0-9_-]*=/.test(v) ? null : 'must be name=value with a variable name';
const terraform: Rules = {
  '-var': long(tfVar),
  '-target': { value: any, joined: true },
  '-replace': { value: any, joined: true },
  '-refresh': { bool: true },
  '-parallelism': { value: digits, joined: true },
  '-lock-timeout': {
    value: (v) => (/^\d{1,6}(ms|s|m|h)?$/.test(v) ? null : 'must be a duration such as 30s'),
    joined: true,
  },
  '-no-color': {},
  '-compact-warnings': {},
};

const pulumiConfig: ValueCheck = (v) =>
  /^[A-Za-z0-9_][A-Za-z0-9_.:-]*=/.test(v) ? null : 'must be key=value';
const pulumi: Rules = {
  '--target': long(any),
  '-t': short(any),
  '--refresh': { bool: true },
  '-r': {},
  '--parallel': long(digits),
  '-p': short(digits),
  '--diff': {},
  '--config': long(pulumiConfig),
  '-c': short(pulumiConfig),
};

const rulesByApp: Record<string, Rules> = {
  ansible,
  terraform,
  tofu: terraform,
  pulumi,
  terragrunt: terraform,
};

export type ArgumentProblem = { argument: string; error: Coded };

/** Options a task without manageProjectResources may pass to the app (for the message). */
export const allowedOptions = (app: string) => Object.keys(rulesByApp[app] ?? {});

/**
 * The first task argument a caller without manageProjectResources may not pass, or null. Apps without a list
 * (bash) take task arguments as positional parameters after the script, so any is fine there.
 */
export function disallowedArgument(app: string, args: string[]): ArgumentProblem | null {
  const rules = rulesByApp[app];
  if (!rules) return null;
  for (let i = 0; i < args.length; i++) {
    const token = args[i] ?? '';
    const exact = Object.hasOwn(rules, token) ? rules[token] : undefined;
    if (exact && !exact.value) continue;
    if (exact?.joined && !exact.separate)
      return { argument: token, error: coded('argument_needs_equals', { argument: token }) };
    if (exact?.separate) {
      const value = args[i + 1];
      if (value === undefined || value.startsWith('-'))
        return { argument: token, error: coded('argument_needs_value', { argument: token }) };
      const problem = exact.value?.(value);
      if (problem)
        return {
          argument: token,
          error: coded('argument_value_invalid', { argument: `${token} ${value}`, detail: problem }),
        };
      i += 1;
      continue;
    }
    const eq = token.indexOf('=');
    const name = eq > 0 ? token.slice(0, eq) : token;
    const joined = eq > 0 && Object.hasOwn(rules, name) ? rules[name] : undefined;
    if (joined?.bool) {
      if (/^(true|false)$/.test(token.slice(eq + 1))) continue;
      return { argument: token, error: coded('argument_needs_bool', { argument: token, name }) };
    }
    if (joined?.joined && joined.value) {
      const problem = joined.value(token.slice(eq + 1));
      if (problem)
        return {
          argument: token,
          error: coded('argument_value_invalid', { argument: token, detail: problem }),
        };
      continue;
    }
    return {
      argument: token,
      error: coded('argument_not_allowed', { argument: token, allowed: allowedOptions(app).join(', ') }),
    };
  }
  return null;
}
