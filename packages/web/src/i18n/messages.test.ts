import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  coded,
  errorCodes,
  errorTexts,
  fieldNames,
  issue,
  placeholdersOf,
  taskRetentionDays,
  thingNames,
} from '@signalbox/contracts';
import i18next from 'i18next';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { languageCodes } from './languages';
import { codeZodIssues, errorText, serverFieldText, translateCode, translateMessage } from './messages';

const here = fileURLToPath(new URL('.', import.meta.url));
const read = (path: string) => JSON.parse(readFileSync(join(here, path), 'utf8'));
const catalogue = (lang: string) => ({
  ...read(`${lang}.json`),
  ...read(`resources/${lang}.json`),
  ...read(`errors/${lang}.json`),
});

async function translator(lang: string) {
  const i18n = i18next.createInstance();
  await i18n.init({
    lng: lang,
    lowerCaseLng: true,
    interpolation: { escapeValue: false },
    resources: { [lang]: { translation: catalogue(lang) } },
  });
  return i18n.t;
}

// The codes whose English server text is the peer's own token; the console says them in words without params.
const peerTokens = new Set(['totp_required', 'totp_disabled']);

describe('every error code in every language', () => {
  it.each(languageCodes)('%s words every code, with exactly the params of its English wording', (lang) => {
    const { errorCode } = read(`errors/${lang}.json`) as { errorCode: Record<string, string> };
    for (const code of errorCodes) {
      const text = errorCode[code];
      expect(text?.trim(), `${lang}: ${code}`).toBeTruthy();
      if (peerTokens.has(code)) continue;
      expect(placeholdersOf(text ?? '').sort(), `${lang}: ${code}`).toEqual(
        placeholdersOf(errorTexts[code]).sort(),
      );
    }
    expect(Object.keys(errorCode).sort()).toEqual([...errorCodes].sort());
  });

  it.each(languageCodes)('%s names every field key and every kind of thing', (lang) => {
    const { fieldName, errorThing } = read(`errors/${lang}.json`) as Record<string, Record<string, string>>;
    for (const key of Object.keys(fieldNames))
      expect(fieldName?.[key]?.trim(), `${lang}: ${key}`).toBeTruthy();
    for (const key of Object.keys(thingNames))
      expect(errorThing?.[key]?.trim(), `${lang}: ${key}`).toBeTruthy();
  });
});

describe('translateCode', () => {
  it('says a code with its params, the field by its key, in the current language', async () => {
    const de = await translator('de');
    expect(translateCode(coded('too_long', { field: 'git_url', max: 30 }), de)).toBe(
      'URL darf höchstens 30 Zeichen lang sein',
    );
    expect(translateCode(coded('not_found', { what: 'template' }), de)).toBe('Vorlage nicht gefunden');
    const en = await translator('en');
    expect(translateCode(coded('in_use', { what: 'key' }), en)).toBe(
      "Can't delete the access key because it is used by the resources below",
    );
    expect(translateCode(coded('required', { field: 'name' }), en)).toBe('Name is required');
  });

  it('says a role’s missing permission by what the role may not do', async () => {
    const fr = await translator('fr');
    expect(translateCode(coded('missing_permission', { permission: 'runProjectTasks' }), fr)).toBe(
      fr('access.denied.runProjectTasks'),
    );
  });
});

describe('translateMessage', () => {
  it('says a schema issue by the code it carries, naming the field the form shows it under', async () => {
    const ru = await translator('ru');
    expect(translateMessage(issue('too_deep', { max: 64 }), ru, 'json')).toBe(
      'Дополнительные переменные: объекты и массивы могут быть вложены не глубже 64 уровней',
    );
    // The form's own text (already in the current language) is shown as it is.
    expect(translateMessage('Schon übersetzt', ru)).toBe('Schon übersetzt');
  });

  it('codes the issues of contract schemas checked in the browser', async () => {
    codeZodIssues();
    const zh = await translator('zh-cn');
    for (const bad of [-1, 1.5, 99_999]) {
      const message = taskRetentionDays.safeParse(bad).error?.issues[0]?.message ?? '';
      expect(message).toMatch(/^@/);
      expect(translateMessage(message, zh, 'task_retention_days'), message).toMatch(/^任务保留天数/);
    }
  });
});

describe('server errors', () => {
  const refused = new ApiError(400, 'Name is required', {
    error: 'Name is required',
    code: 'required',
    params: { field: 'name' },
    fields: { name: 'Name is required' },
    field_errors: { name: { code: 'required', params: { field: 'name' } } },
  });

  it('are said by their code, never by their English text', async () => {
    const es = await translator('es');
    expect(errorText(refused, es)).toBe('Nombre es obligatorio');
    expect(serverFieldText(refused, 'name', es)).toBe('Nombre es obligatorio');
    const unknown = new ApiError(400, 'A newer server said this', { error: 'x', code: 'no_such' as never });
    expect(errorText(unknown, es)).toBe('A newer server said this');
    expect(errorText(new ApiError(0, 'offline'), es)).toBe(es('errors.network'));
  });
});

describe('web sources', () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
    });

  it('match no English error text or label: errors are said from codes and field keys', () => {
    const labels = [...new Set([...Object.values(fieldNames), ...Object.values(thingNames)])].filter((l) =>
      /[A-Z ]/.test(l),
    );
    // An object keyed by an English label: a key at the start of a line or after `{`/`,`.
    const escaped = labels.map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const keyedByLabel = new RegExp(`(?:^|[{,])\\s*['"](${escaped.join('|')})['"]\\s*:`, 'm');
    const found: string[] = [];
    for (const file of sources(join(here, '..'))) {
      const text = readFileSync(file, 'utf8');
      if (/describeMessage|fieldLabels|byField/.test(text)) found.push(`${file}: English-text lookup`);
      const keyed = keyedByLabel.exec(text);
      if (keyed) found.push(`${file}: object keyed by the English label ${keyed[1]}`);
    }
    expect(found).toEqual([]);
  });
});
