import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import i18next from 'i18next';
import { describe, expect, it } from 'vitest';
import { translateMessage } from './messages';

const here = fileURLToPath(new URL('.', import.meta.url));
const catalogue = (lang: string) => ({
  ...JSON.parse(readFileSync(join(here, `${lang}.json`), 'utf8')),
  ...JSON.parse(readFileSync(join(here, 'resources', `${lang}.json`), 'utf8')),
});

async function translator(lang: string) {
  const i18n = i18next.createInstance();
  await i18n.init({ lng: lang, lowerCaseLng: true, resources: { [lang]: { translation: catalogue(lang) } } });
  return i18n.t;
}

describe('translateMessage', () => {
  it('shows contract messages in the current language, with their numbers', async () => {
    const de = await translator('de');
    expect(translateMessage('Task retention days must be 0 or greater', de)).toBe(
      'Die Aufbewahrungsdauer muss 0 oder größer sein',
    );
    expect(translateMessage('Task retention days must be at most 36500', de)).toBe(
      'Die Aufbewahrungsdauer darf höchstens 36500 Tage betragen',
    );
    expect(translateMessage('Name is required', de)).toBe(
      de('validation.required', { field: de('fields.name') }),
    );
    // Unknown server text is shown as the server wrote it.
    expect(translateMessage('Something the catalogue does not know', de)).toBe(
      'Something the catalogue does not know',
    );
  });

  it('maps the retention messages the contract really produces', async () => {
    const { taskRetentionDays } = await import('@signalbox/contracts');
    const en = await translator('en');
    const zh = await translator('zh-cn');
    for (const bad of [-1, 1.5, 99_999]) {
      const message = taskRetentionDays.safeParse(bad).error?.issues[0]?.message ?? '';
      expect(message).not.toBe('');
      // In English the screen shows exactly what the contract says.
      expect(translateMessage(message, en)).toBe(message);
      expect(translateMessage(message, zh), message).toMatch(/^任务保留天数/);
    }
  });
});
