import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../../test/support/harness';
import {
  createTeam,
  readCodes,
  statusByCaller,
  type Team,
  writeCodes,
} from '../../../test/support/permission-matrix';
import {
  ansibleBody,
  snapshot,
  type TemplateFixtures,
  templateFixtures,
} from '../../../test/support/template-fixtures';

const MB = 'x'.repeat(1024 * 1024);

describe.each(testDialects())('views on $name', (dialect) => {
  let h: Harness;
  let projectId: number;
  let clients: Team;
  let admin: Client;
  let base: string;
  let fx: TemplateFixtures;
  let otherProjectId: number;
  let otherViewId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    clients = await createTeam(h, 'Templates project');
    projectId = clients.projectId;
    admin = clients.admin;
    base = `/api/project/${projectId}`;
    fx = await templateFixtures(h, projectId);
    const other = await createTeam(h, 'Other project');
    otherProjectId = other.projectId;
    const res = await other.owner.post(`/api/project/${otherProjectId}/views`, { title: 'Foreign' });
    otherViewId = res.json().id;
  });
  afterAll(async () => h?.close());

  const newView = async (title = 'View') => {
    const res = await admin.post(`${base}/views`, { title });
    expect(res.statusCode).toBe(201);
    return res.json().id as number;
  };

  it('creates views at the end, lists them by position then id, and reads one', async () => {
    const a = await admin.post(`${base}/views`, { title: '  Build  ' });
    expect(a.statusCode).toBe(201);
    expect(a.json()).toEqual({ id: expect.any(Number), project_id: projectId, title: 'Build', position: 0 });
    const b = await admin.post(`${base}/views`, { title: 'Deploy', project_id: projectId });
    expect(b.json().position).toBe(1);
    const c = await admin.post(`${base}/views`, { title: 'Tools', position: 0 });
    expect(c.json().position).toBe(0);

    const list = await clients.guest.get(`${base}/views`);
    expect(list.statusCode).toBe(200);
    expect(list.json().map((v: { title: string }) => v.title)).toEqual(['Build', 'Tools', 'Deploy']);

    const one = await clients.guest.get(`${base}/views/${b.json().id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(b.json());
  });

  it('updates the title and keeps the position unless given', async () => {
    const id = await newView('Old');
    const before = (await admin.get(`${base}/views/${id}`)).json();
    const res = await clients.manager.put(`${base}/views/${id}`, { title: 'New' });
    expect(res.statusCode).toBe(204);
    expect((await admin.get(`${base}/views/${id}`)).json()).toEqual({ ...before, title: 'New' });
    expect((await admin.put(`${base}/views/${id}`, { title: 'New', position: 7 })).statusCode).toBe(204);
    expect((await admin.get(`${base}/views/${id}`)).json().position).toBe(7);
  });

  it('deletes a view and moves its templates out of any view', async () => {
    const id = await newView('Doomed');
    const tpl = await admin.post(`${base}/templates`, ansibleBody(fx, { name: 'In view', view_id: id }));
    expect(tpl.statusCode).toBe(201);
    const inView = await admin.get(`${base}/views/${id}/templates`);
    expect(inView.statusCode).toBe(200);
    expect(inView.json().map((t: { id: number }) => t.id)).toEqual([tpl.json().id]);

    expect((await admin.del(`${base}/views/${id}`)).statusCode).toBe(204);
    expect((await admin.get(`${base}/views/${id}`)).statusCode).toBe(404);
    const after = await admin.get(`${base}/templates/${tpl.json().id}`);
    expect(after.json().view_id).toBeNull();
  });

  it('lists only the templates of the view', async () => {
    const v1 = await newView('One');
    const v2 = await newView('Two');
    await admin.post(`${base}/templates`, ansibleBody(fx, { name: 'B in one', view_id: v1 }));
    await admin.post(`${base}/templates`, ansibleBody(fx, { name: 'A in one', view_id: v1 }));
    await admin.post(`${base}/templates`, ansibleBody(fx, { name: 'In two', view_id: v2 }));
    const res = await clients.guest.get(`${base}/views/${v1}/templates`);
    expect(res.json().map((t: { name: string }) => t.name)).toEqual(['A in one', 'B in one']);
    expect(res.json()[0]).toHaveProperty('last_task', null);
  });

  it('reorders views with a map of id to position', async () => {
    const x = await newView('X');
    const y = await newView('Y');
    const res = await clients.owner.post(`${base}/views/positions`, { [x]: 1000, [y]: 999 });
    expect(res.statusCode).toBe(204);
    expect((await admin.get(`${base}/views/${x}`)).json().position).toBe(1000);
    const titles = (await admin.get(`${base}/views`)).json().map((v: { title: string }) => v.title);
    expect(titles.slice(-2)).toEqual(['Y', 'X']);
    expect((await admin.post(`${base}/views/positions`, {})).statusCode).toBe(204);
  });

  it('refuses positions naming a view of another project or a non-id, changing nothing', async () => {
    const x = await newView('Stay');
    const before = await snapshot(h);
    const foreign = await admin.post(`${base}/views/positions`, { [x]: 5, [otherViewId]: 6 });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toBe(`View ${otherViewId} does not exist in this project`);
    for (const body of [{ abc: 1 }, { [x]: -1 }, { [x]: 1.5 }, { [x]: 'x' }, [1, 2], { [x]: MB }]) {
      const res = await admin.post(`${base}/views/positions`, body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toHaveProperty('error');
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('requires a title', async () => {
    const id = await newView('Keep');
    const before = await snapshot(h);
    for (const body of [{}, { title: '' }, { title: '   ' }, { title: null }]) {
      for (const res of [
        await admin.post(`${base}/views`, body),
        await admin.put(`${base}/views/${id}`, body),
      ]) {
        expect(res.statusCode).toBe(400);
        expect(res.json().error).toBe('Title is required');
      }
    }
    expect(await snapshot(h)).toEqual(before);
  });

  it('refuses wrong types, malformed JSON, 1 MB strings and a foreign project_id, changing nothing', async () => {
    const id = await newView('Keep too');
    const before = await snapshot(h);
    const bodies: unknown[] = [
      { title: 5 },
      { title: ['a'] },
      { title: 'ok', position: 'first' },
      { title: 'ok', position: -1 },
      { title: MB },
      { title: 'ok', project_id: otherProjectId },
      '{"title": "broken"',
      'null',
      '[]',
    ];
    for (const body of bodies) {
      for (const res of [
        await admin.request('POST', `${base}/views`, body),
        await admin.request('PUT', `${base}/views/${id}`, body),
      ]) {
        expect(res.statusCode, JSON.stringify(body).slice(0, 50)).toBe(400);
        expect(res.json()).toHaveProperty('error');
      }
    }
    expect(await admin.post(`${base}/views`, { title: MB }).then((r) => r.json().error)).toBe(
      'Title must be at most 100 characters',
    );
    expect(await snapshot(h)).toEqual(before);
  });

  it('answers 404 for a view of another project or an unknown id', async () => {
    const before = await snapshot(h);
    for (const id of [otherViewId, 999999]) {
      expect((await admin.get(`${base}/views/${id}`)).json()).toMatchObject({ error: 'View not found' });
      expect((await admin.get(`${base}/views/${id}/templates`)).statusCode).toBe(404);
      expect((await admin.put(`${base}/views/${id}`, { title: 'Hijack' })).statusCode).toBe(404);
      expect((await admin.del(`${base}/views/${id}`)).statusCode).toBe(404);
    }
    expect((await admin.get(`${base}/views/abc`)).statusCode).toBe(400);
    expect(await snapshot(h)).toEqual(before);
  });

  it('records an event for every change', async () => {
    const id = await newView('Audited');
    await admin.put(`${base}/views/${id}`, { title: 'Audited 2' });
    await admin.post(`${base}/views/positions`, { [id]: 3 });
    await admin.del(`${base}/views/${id}`);
    const events = await h.deps.db
      .selectFrom('event')
      .select(['description', 'object_type', 'user_id'])
      .where('project_id', '=', projectId)
      .where('object_type', '=', 'view')
      .orderBy('id', 'desc')
      .limit(4)
      .execute();
    expect(events.map((e) => e.description)).toEqual([
      'View Audited 2 deleted',
      'Views reordered',
      'View Audited 2 updated',
      'View Audited created',
    ]);
    expect(events.every((e) => e.user_id === admin.userId)).toBe(true);
  });

  describe('permission matrix', () => {
    it('GET views and views/{id} and views/{id}/templates: members read', async () => {
      const id = await newView('Matrix');
      expect(await statusByCaller(clients, (c) => c.get(`${base}/views`))).toEqual(readCodes());
      expect(await statusByCaller(clients, (c) => c.get(`${base}/views/${id}`))).toEqual(readCodes());
      expect(await statusByCaller(clients, (c) => c.get(`${base}/views/${id}/templates`))).toEqual(
        readCodes(),
      );
    });

    it('POST views needs manageProjectResources', async () => {
      expect(await statusByCaller(clients, (c, r) => c.post(`${base}/views`, { title: `By ${r}` }))).toEqual(
        writeCodes(201),
      );
    });

    it('PUT views/{id} needs manageProjectResources', async () => {
      const id = await newView('Matrix put');
      expect(await statusByCaller(clients, (c, r) => c.put(`${base}/views/${id}`, { title: r }))).toEqual(
        writeCodes(204),
      );
    });

    it('DELETE views/{id} needs manageProjectResources', async () => {
      expect(
        await statusByCaller(clients, async (c) => c.del(`${base}/views/${await newView('Matrix del')}`)),
      ).toEqual(writeCodes(204));
    });

    it('POST views/positions needs manageProjectResources', async () => {
      const id = await newView('Matrix pos');
      expect(await statusByCaller(clients, (c) => c.post(`${base}/views/positions`, { [id]: 2 }))).toEqual(
        writeCodes(204),
      );
    });
  });
});
