import type { EventView } from '@signalbox/contracts';
import { parse as parseCsv } from 'csv-parse/sync';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import { insertTemplate, taskRow } from '../../../test/support/task-fixtures';
import { insertReturningId } from '../../db/values';
import { CSV_COLUMNS } from './events.export';

type Seeded = {
  project_id: number | null;
  user_id: number | null;
  object_type: string;
  object_id: number | null;
  description: string;
  created: string;
};

/** The URL of a `Link: <…>; rel="next"` header, or null. */
const nextLink = (res: LightMyRequestResponse) => {
  const link = res.headers.link;
  return typeof link === 'string' ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null;
};

const ids = (res: LightMyRequestResponse) => (res.json() as EventView[]).map((e) => e.id);

describe.each(testDialects())('activity log on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let owner: Client;
  let guest: Client;
  let outsider: Client;
  let projectId: number;
  let otherProjectId: number;
  /** The seeded events of the project, newest first, as the API lists them. */
  let projectEvents: EventView[];
  const base = () => `/api/project/${projectId}`;

  const seed = async (rows: Seeded[]) => {
    await h.deps.db.insertInto('event').values(rows).execute();
  };

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, username: `admin_${dialect.name}` });
    owner = await h.userClient({ can_create_project: true, username: `Olga_${dialect.name}` });
    outsider = await h.userClient({ can_create_project: true, username: `outsider_${dialect.name}` });
    const team = await h.projectWithTeam(owner, 'Audit project');
    projectId = team.projectId;
    guest = team.members.guest;
    const other = await outsider.post('/api/projects', { name: 'Other project' });
    otherProjectId = other.json().id;
    // Only what this test seeds: the events project creation wrote are cleared.
    await h.deps.db.deleteFrom('event').execute();

    const day = (d: number, h = 12) => new Date(Date.UTC(2025, 2, d, h)).toISOString();
    await seed([
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'template',
        object_id: 1,
        description: 'Template Deploy created',
        created: day(1),
      },
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'template',
        object_id: 1,
        description: 'Template Deploy updated',
        created: day(2),
      },
      {
        project_id: projectId,
        user_id: guest.userId,
        object_type: 'task',
        object_id: 5,
        description: 'Task 5 of Deploy started',
        created: day(3, 8),
      },
      {
        project_id: projectId,
        user_id: null,
        object_type: 'task',
        object_id: 5,
        description: 'Task 5 of Deploy finished: success',
        created: day(3, 9),
      },
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'key',
        object_id: 2,
        description: '=HYPERLINK("http://evil.example","click")',
        created: day(4),
      },
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'key',
        object_id: 3,
        description: 'Access key "prod, eu" created\nsecond line',
        created: day(5),
      },
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'view',
        object_id: 4,
        description: '100%_done! ÜBER view',
        created: day(6),
      },
      {
        project_id: projectId,
        user_id: owner.userId,
        object_type: 'view',
        object_id: 4,
        description: '+1 -2 @home',
        created: day(7),
      },
      {
        project_id: otherProjectId,
        user_id: outsider.userId,
        object_type: 'template',
        object_id: 9,
        description: 'Template of the other project created',
        created: day(2),
      },
      {
        project_id: null,
        user_id: admin.userId,
        object_type: 'user',
        object_id: owner.userId,
        description: 'User Olga created',
        created: day(1, 6),
      },
    ]);
    projectEvents = (await guest.get(`${base()}/events`)).json();
  });
  afterAll(async () => h?.close());

  it("lists a project's events newest first in the peer's Event shape, to every member", async () => {
    const res = await guest.get(`${base()}/events`);
    expect(res.statusCode).toBe(200);
    const events = res.json() as EventView[];
    expect(events).toHaveLength(8);
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => b - a));
    expect(events[0]).toEqual({
      id: expect.any(Number),
      project_id: projectId,
      user_id: owner.userId,
      object_id: 4,
      object_type: 'view',
      description: '+1 -2 @home',
      kind: null,
      params: null,
      created: '2025-03-07T12:00:00.000Z',
      username: owner.username,
      user_name: `Name ${owner.username}`,
      project_name: 'Audit project',
    });
    // A server event (no user) names nobody.
    expect(events.find((e) => e.user_id === null)).toMatchObject({ username: null, user_name: null });
    expect((await guest.get(`${base()}/events/last`)).json()).toEqual(events);
  });

  it('filters by time range, user, user text, object type and description text', async () => {
    const list = async (query: string) => {
      const res = await guest.get(`${base()}/events?${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as EventView[]).map((e) => e.description);
    };
    // from is inclusive, to exclusive; a date is midnight UTC; an offset is honoured.
    expect(await list('from=2025-03-03&to=2025-03-04')).toEqual([
      'Task 5 of Deploy finished: success',
      'Task 5 of Deploy started',
    ]);
    expect(await list('from=2025-03-03T09:00:00Z&to=2025-03-04')).toEqual([
      'Task 5 of Deploy finished: success',
    ]);
    expect(
      await list(`from=${encodeURIComponent('2025-03-03T10:00:00+02:00')}&to=2025-03-03T08:30:00.000Z`),
    ).toEqual(['Task 5 of Deploy started']);
    expect(await list('to=2025-03-02T12:00:00Z')).toEqual(['Template Deploy created']);
    expect(await list(`user_id=${guest.userId}`)).toEqual(['Task 5 of Deploy started']);
    // User text matches username or name, in any case.
    expect(await list(`user=${guest.username.toUpperCase()}`)).toEqual(['Task 5 of Deploy started']);
    expect(await list('user=name%20olga')).toHaveLength(6);
    expect(await list('object_type=key')).toEqual([
      'Access key "prod, eu" created\nsecond line',
      '=HYPERLINK("http://evil.example","click")',
    ]);
    expect(await list('q=deploy')).toEqual([
      'Task 5 of Deploy finished: success',
      'Task 5 of Deploy started',
      'Template Deploy updated',
      'Template Deploy created',
    ]);
    // LIKE's own characters are text: % and _ match only themselves.
    expect(await list('q=%25_')).toEqual(['100%_done! ÜBER view']);
    expect(await list('q=_')).toEqual(['100%_done! ÜBER view']);
    expect(await list('q=!')).toEqual(['100%_done! ÜBER view']);
    expect(await list(`q=${encodeURIComponent('ÜBER')}`)).toEqual(['100%_done! ÜBER view']);
    // Letters beyond ASCII match in any case where the database knows their case (SQLite's lower() does not).
    if (dialect.name !== 'sqlite')
      expect(await list(`q=${encodeURIComponent('über')}`)).toEqual(['100%_done! ÜBER view']);
    // Filters combine; blank text filters are no filter.
    expect(await list(`object_type=template&user_id=${owner.userId}&q=updated&q_extra=1`)).toEqual([
      'Template Deploy updated',
    ]);
    expect(await list('q=%20%20&user=')).toHaveLength(8);
    expect(await list('object_type=schedule')).toEqual([]);
  });

  it('pages by limit with a keyset Link to the next page, and by offset', async () => {
    const all = projectEvents.map((e) => e.id);
    const pages: number[][] = [];
    let url: string | null = `${base()}/events?limit=3`;
    while (url) {
      const res = await guest.get(url);
      expect(res.statusCode).toBe(200);
      pages.push(ids(res));
      url = nextLink(res);
      if (url) expect(url).toMatch(new RegExp(`^/api/project/${projectId}/events\\?limit=3&before=\\d+$`));
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(pages.flat()).toEqual(all);
    // The link keeps the filters.
    const filtered = await guest.get(`${base()}/events?q=deploy&limit=2`);
    const next = nextLink(filtered);
    expect(next).toContain('q=deploy');
    expect(ids(await guest.get(next!))).toEqual(
      projectEvents
        .filter((e) => /deploy/i.test(e.description))
        .slice(2)
        .map((e) => e.id),
    );
    // Offset paging; a last page that is not full has no link.
    const third = await guest.get(`${base()}/events?limit=3&offset=6`);
    expect(ids(third)).toEqual(all.slice(6));
    expect(third.headers.link).toBeUndefined();
    expect(ids(await guest.get(`${base()}/events?before=${all[1]}`))).toEqual(all.slice(2));
  });

  it('refuses bad parameters with a 400 naming the parameter', async () => {
    const cases: [string, string, RegExp][] = [
      ['limit=0', 'limit', /limit must be 1 or greater/i],
      ['limit=1001', 'limit', /limit must be at most 1000/i],
      ['limit=abc', 'limit', /limit must be a number/i],
      ['limit=1&limit=2', 'limit', /limit must be a number/i],
      ['offset=-1', 'offset', /offset must be 0 or greater/i],
      ['before=0', 'before', /before must be 1 or greater/i],
      ['offset=1&before=5', 'before', /either offset or before/i],
      ['from=yesterday', 'from', /from must be a date and time/i],
      ['from=2025-02-30', 'from', /from must be a date and time/i],
      ['to=2025-03-01T10:00:00', 'to', /to must be a date and time/i],
      ['from=2025-03-02&to=2025-03-01', 'to', /to must be later than from/i],
      ['user_id=-3', 'user_id', /user must be 1 or greater/i],
      ['user_id=x', 'user_id', /user must be a number/i],
      ['object_type=Task!', 'object_type', /object type is not in the expected format/i],
      [`q=${'x'.repeat(201)}`, 'q', /q must be at most 200 characters/],
      [`user=${'x'.repeat(201)}`, 'user', /user must be at most 200 characters/],
      ['q=a&q=b', 'q', /q must be a string/i],
    ];
    for (const [query, field, message] of cases) {
      for (const path of [`${base()}/events`, '/api/events', `${base()}/events/export`]) {
        const res = await guest.get(`${path}?${query}${path.endsWith('export') ? '&format=csv' : ''}`);
        if (path.endsWith('export') && ['limit', 'offset', 'before'].includes(field)) {
          expect(res.statusCode, `${path}?${query}`).toBe(200);
          continue;
        }
        expect(res.statusCode, `${path}?${query}`).toBe(400);
        expect(res.json().error, query).toMatch(message);
        expect(Object.keys(res.json().fields), query).toEqual([field]);
      }
    }
    const nul = await guest.get(`${base()}/events?q=a%00b`);
    expect(nul.statusCode).toBe(400);
    for (const format of ['', 'xml', 'CSV']) {
      const res = await guest.get(`${base()}/events/export?format=${format}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        error: expect.stringMatching(/^Format (is required|must be one of csv, json, jsonl)$/),
        fields: { format: expect.any(String) },
      });
    }
    expect((await guest.get(`${base()}/events/export`)).statusCode).toBe(400);
    expect((await admin.get('/api/events?project_id=abc')).json().fields).toEqual({
      project_id: 'Project ID must be a number',
    });
  });

  it("keeps the global log to the caller's projects, and every event to admins", async () => {
    const mine = (await owner.get('/api/events')).json() as EventView[];
    expect(mine.map((e) => e.id)).toEqual(projectEvents.map((e) => e.id));
    const theirs = (await outsider.get('/api/events')).json() as EventView[];
    expect(theirs.map((e) => e.description)).toEqual(['Template of the other project created']);
    // A project the caller is no member of filters to nothing; events of no project are for admins only.
    expect((await outsider.get(`/api/events?project_id=${projectId}`)).json()).toEqual([]);
    expect((await owner.get('/api/events?object_type=user')).json()).toEqual([]);
    const all = (await admin.get('/api/events')).json() as EventView[];
    expect(all).toHaveLength(10);
    expect(all.find((e) => e.project_id === null)).toMatchObject({
      object_type: 'user',
      username: admin.username,
      project_name: null,
    });
    expect(ids(await admin.get(`/api/events?project_id=${otherProjectId}`))).toEqual(theirs.map((e) => e.id));
    // Non-members are refused a project's events and its export; an unknown project is a 404.
    for (const path of [`${base()}/events`, `${base()}/events/last`, `${base()}/events/export?format=csv`]) {
      expect((await outsider.get(path)).statusCode, path).toBe(403);
      expect((await h.anonymous().get(path)).statusCode, path).toBe(401);
    }
    expect((await guest.get('/api/project/999999/events')).statusCode).toBe(404);
    for (const path of ['/api/events', '/api/events/last', '/api/events/export?format=json'])
      expect((await h.anonymous().get(path)).statusCode, path).toBe(401);
    // The outsider's export of the global log holds only their project's event.
    const exported = await outsider.get('/api/events/export?format=jsonl');
    expect(
      exported.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).description),
    ).toEqual(['Template of the other project created']);
  });

  it('exports CSV with quoting and formula protection, as a named file', async () => {
    const res = await guest.get(`${base()}/events/export?format=csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(
      new RegExp(`^attachment; filename="signalbox-events-project-${projectId}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`),
    );
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.startsWith('\uFEFFid,created,project_id,')).toBe(true);
    const rows = parseCsv(res.body, { bom: true, columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual([...CSV_COLUMNS]);
    expect(rows.map((r) => Number(r.id))).toEqual(projectEvents.map((e) => e.id));
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    for (const event of projectEvents) {
      const row = byId.get(event.id)!;
      const unsafe = /^[=+\-@]/.test(event.description);
      expect(row.description).toBe(unsafe ? `'${event.description}` : event.description);
      expect(row).toMatchObject({
        created: event.created,
        project_id: String(event.project_id),
        project_name: 'Audit project',
        user_id: event.user_id === null ? '' : String(event.user_id),
        username: event.username ?? '',
        object_type: event.object_type,
      });
    }
    // The raw text: a formula cell is quoted text starting with ', a line break stays inside its quotes.
    expect(res.body).toContain(`,"'=HYPERLINK(""http://evil.example"",""click"")"\r\n`);
    expect(res.body).toContain(`,"Access key ""prod, eu"" created\nsecond line"\r\n`);
    expect(res.body).toContain(",'+1 -2 @home\r\n");
    // Filters apply to the export.
    const keys = parseCsv((await guest.get(`${base()}/events/export?format=csv&object_type=key`)).body, {
      bom: true,
      columns: true,
    }) as Record<string, string>[];
    expect(keys.map((r) => r.object_type)).toEqual(['key', 'key']);
  });

  it('exports JSON arrays and JSON lines of every matching event, past any page size', async () => {
    const many: Seeded[] = Array.from({ length: 1203 }, (_, i) => ({
      project_id: otherProjectId,
      user_id: outsider.userId,
      object_type: 'task',
      object_id: i,
      description: `Bulk task ${i}`,
      created: new Date(Date.UTC(2025, 3, 1) + i * 1000).toISOString(),
    }));
    for (let i = 0; i < many.length; i += 400) await seed(many.slice(i, i + 400));
    const listed: EventView[] = [];
    for (let url: string | null = `/api/events?project_id=${otherProjectId}&limit=1000`; url; ) {
      const res = await outsider.get(url);
      listed.push(...(res.json() as EventView[]));
      url = nextLink(res);
    }
    expect(listed).toHaveLength(1204);

    const json = await outsider.get('/api/events/export?format=json');
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.headers['content-disposition']).toMatch(
      /^attachment; filename="signalbox-events-\d{4}-\d{2}-\d{2}\.json"$/,
    );
    expect(JSON.parse(json.body)).toEqual(listed);

    const lines = await outsider.get(`/api/events/export?format=jsonl&project_id=${otherProjectId}`);
    expect(lines.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(lines.headers['content-disposition']).toMatch(
      /filename="signalbox-events-\d{4}-\d{2}-\d{2}\.jsonl"$/,
    );
    const parsed = lines.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(parsed).toEqual(listed);

    const csv = await outsider.get('/api/events/export?format=csv&q=bulk%20task%2012');
    const rows = parseCsv(csv.body, { bom: true, columns: true }) as Record<string, string>[];
    // 12, 120–129, 1200–1202.
    expect(rows).toHaveLength(1 + 10 + 3);

    // No match: an empty array, an empty file, a header row.
    const from = 'from=2030-01-01';
    expect(JSON.parse((await outsider.get(`/api/events/export?format=json&${from}`)).body)).toEqual([]);
    expect((await outsider.get(`/api/events/export?format=jsonl&${from}`)).body).toBe('');
    expect((await outsider.get(`/api/events/export?format=csv&${from}`)).body).toBe(
      `\uFEFF${CSV_COLUMNS.join(',')}\r\n`,
    );

    // GET events/last answers at most 200; GET events up to its limit.
    expect(ids(await outsider.get('/api/events/last?limit=1000'))).toHaveLength(200);
    expect(ids(await outsider.get('/api/events?limit=1000'))).toHaveLength(1000);
    expect(ids(await outsider.get('/api/events'))).toHaveLength(200);
  });

  it("names a task event's template and the schedule or integration that started it", async () => {
    const templateId = await insertTemplate(h.deps, projectId, { name: 'Nightly deploy' });
    const schedule = await owner.post(`${base()}/schedules`, {
      template_id: templateId,
      cron_format: '0 3 * * *',
      name: 'Every night',
    });
    expect(schedule.statusCode, schedule.body).toBe(201);
    const integration = await owner.post(`${base()}/integrations`, {
      name: 'Git push',
      template_id: templateId,
    });
    expect(integration.statusCode, integration.body).toBe(201);
    const insertTask = (values: object) =>
      insertReturningId(h.deps.db, h.deps.dialect, 'task', taskRow(projectId, templateId, values));
    const bySchedule = await insertTask({ schedule_id: schedule.json().id });
    const byHook = await insertTask({ integration_id: integration.json().id });
    for (const id of [bySchedule, byHook])
      await h.deps.db
        .insertInto('event')
        .values({
          project_id: projectId,
          user_id: null,
          object_type: 'task',
          object_id: id,
          description: `Task ID ${id} finished: success`,
          kind: 'task.finished',
          params: JSON.stringify({ task_id: id, status: 'success' }),
          created: new Date().toISOString(),
        })
        .execute();
    const events = (await guest.get(`${base()}/events?object_type=task`)).json() as EventView[];
    expect(events.find((e) => e.object_id === bySchedule)?.params).toEqual({
      task_id: bySchedule,
      status: 'success',
      template: 'Nightly deploy',
      schedule: 'Every night',
    });
    expect(events.find((e) => e.object_id === byHook)?.params).toEqual({
      task_id: byHook,
      status: 'success',
      template: 'Nightly deploy',
      integration: 'Git push',
    });

    // Alias events carry a kind the console words in the reader's language.
    const alias = await owner.post(`${base()}/integrations/${integration.json().id}/aliases`, {});
    expect(alias.statusCode, alias.body).toBe(201);
    const aliasEvents = (
      await guest.get(`${base()}/events?object_type=integration_alias`)
    ).json() as EventView[];
    expect(aliasEvents[0]).toMatchObject({
      kind: 'alias.created',
      params: { integration: 'Git push' },
      description: 'Alias of integration Git push created',
    });
  });

  it('records events through the API and finds them by their text', async () => {
    const view = await owner.post(`${base()}/views`, { title: 'Nightly builds' });
    expect(view.statusCode).toBe(201);
    const found = (await guest.get(`${base()}/events?q=nightly&object_type=view`)).json() as EventView[];
    expect(found).toEqual([
      expect.objectContaining({
        object_id: view.json().id,
        description: 'View Nightly builds created',
        user_id: owner.userId,
      }),
    ]);
  });
});
