import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { readPref, writePref } from '../lib/prefs';
import en from './en.json';
import { type LanguageCode, languageCodes, pickLanguage } from './languages';

// English is bundled (it is the fallback); every other language is its own chunk, loaded on demand.
const loaders = import.meta.glob<{ default: Record<string, unknown> }>(['./*.json', '!./en.json']);
// English resources of later screens are bundled when present.
const enResources =
  Object.values(
    import.meta.glob<{ default: Record<string, unknown> }>('./resources/en.json', { eager: true }),
  )[0]?.default ?? {};
// The resource screens keep their strings in resources/<lang>.json, merged into the same namespace.
const resourceLoaders = import.meta.glob<{ default: Record<string, unknown> }>([
  './resources/*.json',
  '!./resources/en.json',
]);
// The wording of every error code, field and kind of thing is in errors/<lang>.json (English bundled).
const enErrors =
  Object.values(
    import.meta.glob<{ default: Record<string, unknown> }>('./errors/en.json', { eager: true }),
  )[0]?.default ?? {};
const errorLoaders = import.meta.glob<{ default: Record<string, unknown> }>([
  './errors/*.json',
  '!./errors/en.json',
]);

async function loadLanguage(lang: string) {
  if (lang === 'en' || i18next.hasResourceBundle(lang, 'translation')) return;
  const load = loaders[`./${lang}.json`];
  if (!load) return;
  const module = await load();
  i18next.addResourceBundle(lang, 'translation', module.default, true, true);
  const resources = await resourceLoaders[`./resources/${lang}.json`]?.();
  if (resources) i18next.addResourceBundle(lang, 'translation', resources.default, true, true);
  const errors = await errorLoaders[`./errors/${lang}.json`]?.();
  if (errors) i18next.addResourceBundle(lang, 'translation', errors.default, true, true);
}

export async function initI18n() {
  const lang = pickLanguage(readPref('lang'), navigator.languages ?? [navigator.language]);
  await i18next.use(initReactI18next).init({
    resources: { en: { translation: { ...en, ...enResources, ...enErrors } } },
    lng: 'en',
    fallbackLng: 'en',
    supportedLngs: languageCodes,
    lowerCaseLng: true,
    partialBundledLanguages: true,
    interpolation: { escapeValue: false },
    returnNull: false,
    showSupportNotice: false,
  });
  await setLanguage(lang, false);
}

export async function setLanguage(lang: LanguageCode | string, remember = true) {
  await loadLanguage(lang);
  await i18next.changeLanguage(lang);
  document.documentElement.lang = lang;
  if (remember) writePref('lang', lang);
}

export { i18next };
