/** The 12 interface languages, with their names written in each language. */
export const languages = [
  { code: 'en', name: 'English' },
  { code: 'de', name: 'Deutsch' },
  { code: 'es', name: 'Español' },
  { code: 'fr', name: 'Français' },
  { code: 'it', name: 'Italiano' },
  { code: 'nl', name: 'Nederlands' },
  { code: 'pl', name: 'Polski' },
  { code: 'pt', name: 'Português' },
  { code: 'pt-br', name: 'Português (Brasil)' },
  { code: 'ru', name: 'Русский' },
  { code: 'zh-cn', name: '简体中文' },
  { code: 'zh-tw', name: '繁體中文' },
] as const;
export type LanguageCode = (typeof languages)[number]['code'];
export const languageCodes: string[] = languages.map((l) => l.code);

/** The remembered language, else the browser's, else English. */
export function pickLanguage(stored: string | null, browser: readonly string[]): LanguageCode {
  if (stored && languageCodes.includes(stored)) return stored as LanguageCode;
  for (const tag of browser) {
    const lower = tag.toLowerCase();
    if (languageCodes.includes(lower)) return lower as LanguageCode;
    if (lower === 'zh-hant' || lower.startsWith('zh-hk') || lower.startsWith('zh-mo')) return 'zh-tw';
    if (lower.startsWith('zh')) return 'zh-cn';
    if (lower.startsWith('pt')) return lower === 'pt-pt' ? 'pt' : 'pt-br';
    const base = lower.split('-')[0];
    if (languageCodes.includes(base)) return base as LanguageCode;
  }
  return 'en';
}
