import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, errorCodes, messages } from '@signalbox/contracts';
import i18next from 'i18next';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { resourceLabels } from '../components/messages';
import { languageCodes } from './languages';
import {
  codeTexts,
  errorText,
  fieldLabels,
  serverFieldText,
  translateCode,
  translateMessage,
} from './messages';

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

describe('error codes', () => {
  const lookup = (tree: Record<string, unknown>, key: string) =>
    key
      .split('.')
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], tree);

  it('says how every code is shown', () => {
    expect(Object.keys(codeTexts).sort()).toEqual([...errorCodes].sort());
  });

  it.each(languageCodes)(
    '%s has a translation of every code the catalogue says, and of every field label',
    (lang) => {
      const tree = catalogue(lang);
      const keys = Object.values(codeTexts).flatMap((text) =>
        text === null
          ? []
          : typeof text === 'string'
            ? [text]
            : 'byParam' in text
              ? [...Object.values(text.keys), text.otherwise]
              : Object.values(text.byField),
      );
      const labels = [...Object.values(fieldLabels), ...Object.values(resourceLabels)];
      const missing = [...keys, ...labels].filter((key) => {
        const text = lookup(tree, key);
        return typeof text !== 'string' || text.trim() === '';
      });
      expect(missing).toEqual([]);
    },
  );

  it('translates a server error by its code and params, not by its words', async () => {
    const de = await translator('de');
    const err = new ApiError(400, 'whatever the server wrote', {
      error: 'whatever the server wrote',
      code: ErrorCode.tooLong,
      params: { field: 'Name', max: 30 },
      fields: { name: 'whatever the server wrote' },
      field_errors: { name: { code: ErrorCode.required, params: { field: 'Email' } } },
    });
    expect(errorText(err, de)).toBe(de('validation.tooLong', { field: de('fields.name'), max: 30 }));
    expect(serverFieldText(err, 'name', de)).toBe(de('validation.required', { field: de('fields.email') }));
    expect(serverFieldText(err, 'email', de)).toBeUndefined();
  });

  it('says a missing permission by what the role may not do, in the current language', async () => {
    const de = await translator('de');
    const en = await translator('en');
    const refused = (permission: string) =>
      new ApiError(403, messages.missingPermission(permission), {
        error: messages.missingPermission(permission),
        code: ErrorCode.missingPermission,
        params: { permission },
      });
    expect(errorText(refused('runProjectTasks'), de)).toBe(
      'Ihre Rolle in diesem Projekt erlaubt es nicht, Aufgaben auszuführen.',
    );
    expect(errorText(refused('runProjectTasks'), en)).toBe(
      'Your role in this project does not allow running tasks.',
    );
    for (const permission of ['manageProjectResources', 'updateProject', 'manageProjectUsers']) {
      const text = errorText(refused(permission), de);
      expect(text).toMatch(/^Ihre Rolle in diesem Projekt erlaubt es nicht/);
      expect(text).not.toContain(permission);
    }
    // A permission this client does not know, and the bare message of an older server, are still said plainly.
    expect(errorText(refused('somethingNew'), de)).toBe(de('errors.forbidden'));
    expect(errorText(new ApiError(403, messages.missingPermission('runProjectTasks')), de)).toBe(
      'Ihre Rolle in diesem Projekt erlaubt es nicht, Aufgaben auszuführen.',
    );
  });

  it("says a taken project name as one of the user's own projects, other kinds' as taken", async () => {
    const de = await translator('de');
    const taken = (kind: 'project' | 'inventory') => {
      const message = messages.nameTaken(kind);
      return new ApiError(400, message, {
        error: message,
        code: ErrorCode.nameTaken,
        params: { kind },
        fields: { name: message },
        field_errors: { name: { code: ErrorCode.nameTaken, params: { kind } } },
      });
    };
    expect(serverFieldText(taken('project'), 'name', de)).toBe(
      'Sie haben bereits ein Projekt mit diesem Namen; wählen Sie einen anderen',
    );
    expect(serverFieldText(taken('inventory'), 'name', de)).toBe(de('forms.nameTaken'));
  });

  it("shows the server's text for a code said in its own words, an unknown code or an unknown field", async () => {
    const de = await translator('de');
    expect(translateCode({ code: ErrorCode.conflict }, 'Username x is already taken', de)).toBe(
      'Username x is already taken',
    );
    expect(translateCode({ code: 'from_a_newer_server' as ErrorCode }, 'Newer text', de)).toBe('Newer text');
    expect(
      translateCode(
        { code: ErrorCode.required, params: { field: 'Unlabelled' } },
        'Unlabelled is required',
        de,
      ),
    ).toBe('Unlabelled is required');
    expect(translateCode(undefined, 'No code at all', de)).toBe('No code at all');
  });

  it('translates the fixed contract messages in every language', async () => {
    for (const lang of languageCodes) {
      const t = await translator(lang);
      expect(translateMessage(messages.noPermission, t)).toBe(t('errors.forbidden'));
      expect(translateMessage(messages.enumNeedsValues, t)).toBe(t('survey.enumNeedsValues'));
    }
  });
});
