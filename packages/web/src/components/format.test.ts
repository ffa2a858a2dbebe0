import i18next from 'i18next';
import { beforeAll, expect, it } from 'vitest';
import { formatDateTime, formatDuration, shortDateAndTime } from './format';

// Dates are worded in the language i18next has; no translations are needed for them.
beforeAll(() => i18next.init({ lng: 'en', resources: {} }));

it('formats durations', () => {
  expect(formatDuration(null, null)).toBe('—');
  expect(formatDuration('2025-01-01T00:00:00Z', '2025-01-01T00:01:05Z')).toBe('1:05');
  expect(formatDuration('2025-01-01T00:00:00Z', '2025-01-01T02:00:09Z')).toBe('2:00:09');
});

it('formats dates as the browser does in the reader’s language, and says — or null for none', async () => {
  const value = '2025-03-09T17:04:05Z';
  const date = new Date(value);
  for (const language of ['en', 'de', 'fr', 'ja', 'zh-CN']) {
    await i18next.changeLanguage(language);
    const locale = language === 'en' ? undefined : language;
    expect(formatDateTime(value)).toBe(
      date.toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'medium' }),
    );
    expect(shortDateAndTime(value)).toEqual([
      date.toLocaleDateString(locale, { dateStyle: 'short' }),
      date.toLocaleTimeString(locale, { timeStyle: 'short' }),
    ]);
  }
  expect(formatDateTime(null)).toBe('—');
  expect(formatDateTime('not a date')).toBe('—');
  expect(shortDateAndTime(undefined)).toBeNull();
});

it('makes one formatter per language and style, not one per date', async () => {
  await i18next.changeLanguage('it');
  const Original = Intl.DateTimeFormat;
  let made = 0;
  Intl.DateTimeFormat = class extends Original {
    constructor(...args: ConstructorParameters<typeof Original>) {
      super(...args);
      made++;
    }
  } as typeof Intl.DateTimeFormat;
  try {
    for (let i = 0; i < 200; i++) {
      const value = new Date(Date.UTC(2025, 0, 1 + i)).toISOString();
      formatDateTime(value);
      shortDateAndTime(value);
    }
  } finally {
    Intl.DateTimeFormat = Original;
  }
  // Italian is new here: its three styles are made once each, then used for all 200 dates.
  expect(made).toBe(3);
});
