import { createInstance } from 'i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import de from '../../i18n/de.json';
import en from '../../i18n/en.json';
import deResources from '../../i18n/resources/de.json';
import enResources from '../../i18n/resources/en.json';
import { eventActor, eventText } from './eventText';

describe('eventText', () => {
  const i18n = createInstance();
  beforeAll(async () => {
    await i18n.init({
      lng: 'de',
      fallbackLng: 'en',
      resources: {
        en: { translation: { ...en, ...enResources } },
        de: { translation: { ...de, ...deResources } },
      },
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
    // A kind of object named with an underscore.
    expect(say({ kind: 'option_list.updated', params: { name: 'Regions' }, description: 'x' })).toBe(
      'Optionsliste Regions geändert',
    );
  });

  it('says a task status by its label', () => {
    expect(say({ kind: 'task.finished', params: { task_id: 7, status: 'error' }, description: 'x' })).toBe(
      'Aufgabe #7 beendet: Fehlgeschlagen',
    );
  });

  it('words the approval of a run an AI agent started, naming its token', () => {
    expect(
      say({
        kind: 'task.agent_queued',
        params: { task_id: 9, token: 'ci bot', token_id: 'a1' },
        description: 'x',
      }),
    ).toBe('Aufgabe #9, von einem KI-Agenten gestartet (API-Token ci bot), wartet auf Freigabe');
    expect(say({ kind: 'task.approved', params: { task_id: 9 }, description: 'x' })).toBe(
      'Aufgabe #9 freigegeben',
    );
    expect(say({ kind: 'task.rejected', params: { task_id: 9, reason: 'freeze' }, description: 'x' })).toBe(
      'Aufgabe #9 abgelehnt: freeze',
    );
    expect(
      say({ kind: 'task.finished', params: { task_id: 9, status: 'waiting_approval' }, description: 'x' }),
    ).toBe('Aufgabe #9 beendet: Wartet auf Freigabe');
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

  it('names the template of a task event, and who started a task no user started', () => {
    const finished = {
      kind: 'task.finished',
      params: { task_id: 7, status: 'success', template: 'Deploy', schedule: 'Nachts' },
      description: 'Task ID 7 finished: success',
      user_name: null,
      username: null,
    };
    expect(say(finished)).toBe('Aufgabe #7 von Deploy beendet: Erfolgreich');
    expect(eventActor(finished, i18n.t)).toBe('Zeitplan: Nachts');
    expect(eventActor({ ...finished, params: { task_id: 7, integration: 'Push' } }, i18n.t)).toBe(
      'Integration: Push',
    );
    expect(eventActor({ ...finished, user_name: 'Ann' }, i18n.t)).toBe('Ann');
    expect(eventActor({ ...finished, params: null }, i18n.t)).toBe('—');
    // Without the template (its task deleted since): the shorter text.
    expect(say({ ...finished, params: { task_id: 7, status: 'success' } })).toBe(
      'Aufgabe #7 beendet: Erfolgreich',
    );
  });

  it('words integration alias, matcher and extracted value events', () => {
    expect(say({ kind: 'alias.created', params: { integration: 'Push' }, description: 'x' })).toBe(
      'Alias der Integration Push erstellt',
    );
    expect(say({ kind: 'projectalias.deleted', params: {}, description: 'x' })).toBe(
      'Integrations-Alias des Projekts gelöscht',
    );
    expect(
      say({ kind: 'matcher.updated', params: { name: 'branch', integration: 'Push' }, description: 'x' }),
    ).toBe('Bedingung branch der Integration Push geändert');
  });
});
