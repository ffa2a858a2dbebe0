import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { type App, type AppSettings, appDefaults, apps } from '@signalbox/contracts';
import { z } from 'zod';

/**
 * The app registry: every app's settings (see AppSettings), the defaults with SIGNALBOX_APPS laid over them. The
 * variable holds the peer's `apps` object, app id -> the fields to change, e.g.
 * `{"python":{"path":"/usr/bin/python3.11"},"pulumi":{"active":false}}`. It comes from the server's
 * configuration only: what a task runs is never chosen by a user.
 */
export type AppRegistry = Readonly<Record<App, AppSettings>>;

/** The binary an app runs and the options that go first on its command line. */
export type AppTool = { path: string; args: readonly string[] };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A binary: an absolute path, or a bare command name looked up on PATH; never an option, never relative. */
const binary = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(4096, 'must be at most 4096 characters')
  .refine((v) => !CONTROL.test(v), 'must not contain control characters')
  .refine(
    (v) => v.startsWith('/') || /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/.test(v),
    'must be an absolute path or a command name found on PATH (no "/" inside, not starting with "-")',
  );

const text = (max: number) =>
  z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`);

const appOverride = z.strictObject(
  {
    active: z.boolean({ error: 'must be true or false' }).optional(),
    priority: z.number({ error: 'must be a number' }).int('must be an integer').optional(),
    title: text(100).optional(),
    icon: text(100).optional(),
    color: text(50).optional(),
    dark_color: text(50).optional(),
    path: binary.optional(),
    args: z
      .array(
        text(4096).refine((v) => !v.includes('\0'), 'must not contain NUL characters'),
        { error: 'must be a list of strings' },
      )
      .max(50, 'must have at most 50 entries')
      .optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : 'must be an object') },
);
export type AppOverride = z.infer<typeof appOverride>;

/** SIGNALBOX_APPS: app id -> override; an app id that does not exist or a field that does not is refused. */
export const appOverrides = z.record(
  z.string().refine((id) => (apps as readonly string[]).includes(id)),
  appOverride,
  {
    error: (issue) => {
      if (issue.code === 'invalid_key')
        return `unknown app ${JSON.stringify(issue.input)} (the apps are ${apps.join(', ')})`;
      return issue.code === 'invalid_type' ? 'must be a JSON object of app id to settings' : undefined;
    },
  },
);

/** The registry of the defaults with `overrides` laid over them (a field left out keeps its default). */
export function appRegistry(overrides: Partial<Record<string, AppOverride>> = {}): AppRegistry {
  const out = {} as Record<App, AppSettings>;
  for (const id of apps) {
    const set = overrides[id] ?? {};
    const merged = { ...appDefaults[id] };
    for (const [key, value] of Object.entries(set))
      if (value !== undefined) Object.assign(merged, { [key]: value });
    // The title shows in the console: an empty one keeps the default.
    if (!merged.title.trim()) merged.title = appDefaults[id].title;
    out[id] = merged;
  }
  return out;
}

/** The registry's entries in the order the console lists them: highest priority first, then as defined. */
export const appList = (registry: AppRegistry) =>
  apps.map((id) => ({ id, ...registry[id] })).sort((a, b) => b.priority - a.priority);

/**
 * Whether a binary can be run: an absolute (or relative) path must name an executable file; a bare name is looked
 * for in every directory of `searchPath` (the server's PATH, which tasks run with).
 */
export function binaryFound(path: string, searchPath = process.env.PATH ?? ''): boolean {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (path.includes('/')) return executable(path);
  return searchPath
    .split(delimiter)
    .filter((dir) => isAbsolute(dir))
    .some((dir) => executable(join(dir, path)));
}
