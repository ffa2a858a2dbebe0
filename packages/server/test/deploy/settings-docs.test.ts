import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { readRepoFile } from '../support/deploy-files';

/**
 * The settings config.ts reads, against where they are documented: `.env.example` (every name, its default, a
 * comment) and the configuration tables of docs/configuration.md (every name and its Semaphore UI alias). A new, renamed or
 * removed variable fails here until both are updated.
 */
const NAME = /(?:SIGNALBOX|SEMAPHORE)_[A-Z0-9_]+/;

/** Each setting's names as config.ts lists them: the SIGNALBOX_* name, then its SEMAPHORE_* aliases. */
const settings = [
  ...readRepoFile('packages/server/src/config.ts').matchAll(
    /'(SIGNALBOX_[A-Z0-9_]+)'((?:,\s*'SEMAPHORE_[A-Z0-9_]+')*)/g,
  ),
].map(([, name, aliases]) => ({
  name,
  aliases: [...aliases.matchAll(/SEMAPHORE_[A-Z0-9_]+/g)].map((m) => m[0]),
}));
const allNames = settings.flatMap((s) => [s.name, ...s.aliases]).sort();

describe('settings documentation', () => {
  it('reads the names from config.ts', () => {
    expect(settings.length).toBeGreaterThan(40);
    expect(settings.map((s) => s.name)).toContain('SIGNALBOX_SECRET_KEY');
    expect(settings.find((s) => s.name === 'SIGNALBOX_HOST')?.aliases).toEqual(['SEMAPHORE_INTERFACE']);
  });

  describe('.env.example', () => {
    const lines = readRepoFile('.env.example').split('\n');
    const entries = lines.flatMap((line, i) => {
      const m = new RegExp(`^# (${NAME.source})=(.*)$`).exec(line);
      return m ? [{ name: m[1], value: m[2], comment: lines[i - 1] ?? '' }] : [];
    });

    it('lists every variable config.ts reads, once, and no other', () => {
      expect(entries.map((e) => e.name).sort()).toEqual(allNames);
    });

    it('comments every variable on the line above it', () => {
      for (const entry of entries) {
        expect(entry.comment, entry.name).toMatch(/^# \S/);
        expect(entry.comment, entry.name).not.toMatch(new RegExp(`^# ${NAME.source}=`));
      }
    });

    it('names, above each alias, the setting it stands for', () => {
      for (const { name, aliases } of settings)
        for (const alias of aliases)
          expect(entries.find((e) => e.name === alias)?.comment).toBe(`# Alias of ${name}.`);
    });

    it('shows the defaults config.ts applies', () => {
      const defaults = loadConfig({});
      for (const { name, value } of entries.filter((e) => e.name.startsWith('SIGNALBOX_') && e.value))
        expect(loadConfig({ [name]: value }), name).toEqual(defaults);
    });

    it('sets nothing when copied as is: every setting line is commented out', () => {
      expect(lines.filter((line) => line.trim() && !line.startsWith('#'))).toEqual([]);
    });
  });

  describe('configuration tables (docs/configuration.md)', () => {
    const rows = readRepoFile('docs/configuration.md')
      .split('\n')
      .filter((line) => line.startsWith('|'))
      .map((line) => line.split('|').map((cell) => cell.trim()))
      .filter(([, first]) => NAME.test(first));

    it('has one row per setting, with its Semaphore UI alias', () => {
      const documented = rows.map(([, name, alias]) => ({
        name: name.replace(/`/g, ''),
        aliases: NAME.test(alias) ? alias.replace(/`/g, '').split(/,\s*/) : [],
      }));
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      expect(documented.sort(byName)).toEqual([...settings].sort(byName));
    });
  });
});
