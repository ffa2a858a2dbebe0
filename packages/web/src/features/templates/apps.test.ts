import { type AppInfo, appDefaults, apps } from '@signalbox/contracts';
import type { TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import { activeApps, appLabel, appMissing } from './apps';

/** A translation function that says which key it was asked for. */
const t = ((key: string) => `translated:${key}`) as unknown as TFunction;

const registry = (changes: Partial<Record<(typeof apps)[number], Partial<AppInfo>>> = {}): AppInfo[] =>
  apps.map((id) => {
    const { path: _path, args: _args, ...display } = appDefaults[id];
    return { id, ...display, installed: true, ...changes[id] };
  });

describe('app names and choices from the registry', () => {
  it('translates an app that keeps its default title, shows a configured title as it is', () => {
    const list = registry({ python: { title: 'Python 3.12' } });
    expect(appLabel(t, 'python', list)).toBe('Python 3.12');
    expect(appLabel(t, 'powershell', list)).toBe('translated:tpl.apps.powershell');
    // Before the registry has loaded, the translation.
    expect(appLabel(t, 'terragrunt')).toBe('translated:tpl.apps.terragrunt');
  });

  it('offers the active apps only, in the registry order', () => {
    const list = registry({ pulumi: { active: false }, bash: { active: false } });
    expect(activeApps(list)).toEqual(apps.filter((a) => a !== 'pulumi' && a !== 'bash'));
    expect(activeApps([...list].reverse())[0]).toBe('python');
    expect(activeApps(undefined)).toEqual([]);
  });

  it('tells a template whose app binary the server does not find, Ansible for the empty app', () => {
    const list = registry({ tofu: { installed: false }, ansible: { installed: false } });
    expect(appMissing(list, 'tofu')).toBe(true);
    expect(appMissing(list, '')).toBe(true);
    expect(appMissing(list, 'bash')).toBe(false);
    expect(appMissing(undefined, 'tofu')).toBe(false);
  });
});
