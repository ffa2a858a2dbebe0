import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Api } from './api';
import { UsageError } from './errors';
import type { Terminal } from './terminal';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

/** What a command runs with: its parsed options and arguments, the terminal, and the API (loaded when asked). */
export type Context = {
  values: Values;
  args: string[];
  term: Terminal;
  /** The API of the configured server; a command that never asks for it needs no credentials. */
  api: () => Api;
};

/** A remote client command: its name, its help, its options and how it runs (it returns the exit code). */
export type ClientCommand = {
  name: string;
  /** The line the top-level help lists it with. */
  summary: string;
  /** The synopsis and what every option does (`signalbox <name> --help`). */
  help: string;
  options: Options;
  /** How many positional arguments it takes. */
  args: { min: number; max: number; names: string };
  run(ctx: Context): Promise<number>;
};

/** Options every client command takes. */
export const commonOptions: Options = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/**
 * The "Options:" part of a command's help: each option and what it does, the options every command takes last,
 * in one column (a long text goes on to the next lines, indented to that column).
 */
export function optionsHelp(rows: readonly [string, string][]): string {
  const all: [string, string][] = [
    ...rows,
    ['--json', 'print the result as JSON and nothing else on stdout (JSON Lines with --follow)'],
    ['-h, --help', 'show this help'],
  ];
  const width = Math.max(...all.map(([flag]) => flag.length)) + 4;
  return `Options:\n${all
    .map(([flag, text]) => `  ${flag.padEnd(width - 2)}${text.replace(/\n/g, `\n${' '.repeat(width)}`)}`)
    .join('\n')}`;
}

/** The command's options and arguments; an unknown option or a wrong number of arguments is a UsageError. */
export function parseCommandLine(command: ClientCommand, argv: string[]): { values: Values; args: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...commonOptions, ...command.options },
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (err) {
    // parseArgs says e.g. "Unknown option '--foo'. To specify a positional argument starting with a '-', …".
    throw new UsageError(((err as Error).message.split('. ')[0] ?? '').replace(/^Option/, 'option'));
  }
  const { values, positionals } = parsed;
  if (values.help) return { values, args: positionals };
  const { min, max, names } = command.args;
  if (positionals.length < min) throw new UsageError(`${command.name} needs ${names}`);
  if (positionals.length > max)
    throw new UsageError(`${command.name} takes ${max ? names : 'no arguments'} (got "${positionals[max]}")`);
  return { values, args: positionals };
}

/** A string option's value, or undefined. */
export const stringOption = (values: Values, name: string) =>
  typeof values[name] === 'string' ? (values[name] as string) : undefined;

/** A positive id from an argument or option (task and template ids); anything else is a UsageError. */
export function parseId(text: string, what: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) < 1 || Number(text) > 2 ** 31 - 1)
    throw new UsageError(`${what} must be a positive whole number (got "${text.slice(0, 40)}")`);
  return Number(text);
}
