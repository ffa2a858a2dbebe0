import { createInstance } from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import de from '../../i18n/de.json';
import en from '../../i18n/en.json';
import { eventText } from './eventText';

describe('eventText', () => {
  const i18n = createInstance();
  beforeAll(async () => {
    await i18n.init({
      lng: 'de',
      fallbackLng: 'en',
      resources: { en: { translation: en }, de: { translation: de } },
      interpolation: { escapeValue: false },
    });
  });
  const say = (event: Parameters<typeof eventText>[0]) => eventText(event, i18n.t, (key) => i18n.exists(key));

  it("words an event by its kind in the reader's language, with its params", () => {
    expect(
      say({
        kind: 'template.created',
        params: { name: 'Deploy <b>' },
        description: 'Template Deploy created',
      }),
    ).toBe('Vorlage Deploy <b> erstellt');
    expect(say({ kind: 'project.restored', params: { name: 'Web' }, description: 'x' })).toBe(
      'Projekt Web aus einer Sicherung wiederhergestellt',
    );
  });

  it('says a task status by its label', () => {
    expect(say({ kind: 'task.finished', params: { task_id: 7, status: 'error' }, description: 'x' })).toBe(
      'Aufgabe #7 beendet: Fehlgeschlagen',
    );
  });

  it('says a project role by its label, and an unknown role as it is', () => {
    expect(
      say({
        kind: 'member.changed',
        params: { name: 'ann', from: 'guest', role: 'task_runner' },
        description: 'x',
      }),
    ).toBe('Rolle von ann von Gast zu Aufgabenausführer geändert');
    expect(say({ kind: 'member.added', params: { name: 'bob', role: 'boss' }, description: 'x' })).toBe(
      'bob als boss zum Team hinzugefügt',
    );
  });

  it('falls back to the description for older events, unknown kinds and missing params', () => {
    expect(say({ kind: null, params: null, description: 'Task ID 3 deleted' })).toBe('Task ID 3 deleted');
    expect(
      say({ kind: 'runner.registered', params: { name: 'r' }, description: 'Runner r registered' }),
    ).toBe('Runner r registered');
    expect(say({ kind: 'template.created', params: {}, description: 'Template T created' })).toBe(
      'Template T created',
    );
    expect(say({ kind: 'status', params: { name: 'x' }, description: 'Odd' })).toBe('Odd');
  });
});
