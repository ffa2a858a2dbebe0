import { expect } from 'vitest';
import type { Client, Harness } from './harness';

/** Shared helpers for the project-resource API tests (keys, repositories, inventory, environments). */

const snapshotTables = ['access_key', 'repository', 'inventory', 'environment', 'event'] as const;

/** Every row of the resource tables and the event log, to assert that a refused request changed nothing. */
export async function snapshot(h: Harness) {
  const out: Record<string, unknown[]> = {};
  for (const table of snapshotTables) {
    out[table] = await h.deps.db.selectFrom(table).selectAll().orderBy('id').execute();
  }
  return out;
}

export const MEGABYTE = 'x'.repeat(1024 * 1024);

/**
 * Sends each bad body and expects a 4xx `{error}` with nothing changed in the database.
 * Strings are sent raw (malformed JSON); objects as JSON.
 */
export async function expectRejected(
  h: Harness,
  client: Client,
  method: 'POST' | 'PUT',
  url: string,
  bodies: unknown[],
) {
  const before = await snapshot(h);
  for (const body of bodies) {
    const res = await client.request(method, url, body);
    expect(res.statusCode, `${method} ${url} ${JSON.stringify(body).slice(0, 200)}`).toBeGreaterThanOrEqual(
      400,
    );
    expect(res.statusCode).toBeLessThan(500);
    expect(typeof res.json().error).toBe('string');
  }
  expect(await snapshot(h)).toEqual(before);
}

/** Sends each bad body as a POST to `collectionUrl` and as a PUT to `itemUrl`, as `expectRejected` does. */
export async function expectRejectedOnCreateAndUpdate(
  h: Harness,
  client: Client,
  collectionUrl: string,
  itemUrl: string,
  bodies: unknown[],
) {
  await expectRejected(h, client, 'POST', collectionUrl, bodies);
  await expectRejected(h, client, 'PUT', itemUrl, bodies);
}

/** Bodies every POST/PUT must refuse whatever its fields: malformed JSON and non-objects. */
export const malformedBodies: unknown[] = ['{"name": ', '[1,2', 'null', '"text"', '42', [1, 2]];

/** The refs of an object nothing uses. */
export const noRefs = {
  templates: [],
  inventories: [],
  repositories: [],
  environments: [],
  integrations: [],
  schedules: [],
};

/** `client` POSTs `body` to `url`: 201 with exactly `answer` and a fresh id. Returns the answer. */
export async function expectCreated(client: Client, url: string, body: unknown, answer: object) {
  const res = await client.post(url, body);
  expect(res.statusCode).toBe(201);
  const created = res.json();
  expect(created).toEqual({ id: expect.any(Number), ...answer });
  return created;
}

/** GET `url` lists the objects sorted by name as `ascending`; `?sort=name&order=desc` lists them in reverse. */
export async function expectSortedByName(client: Client, url: string, ascending: string[]) {
  const res = await client.get(url);
  expect(res.statusCode).toBe(200);
  expect(res.json().map((r: { name: string }) => r.name)).toEqual(ascending);
  const desc = await client.get(`${url}?sort=name&order=desc`);
  expect(desc.json().map((r: { name: string }) => r.name)).toEqual([...ascending].reverse());
}

/** Names the latest events of the project, newest first. */
export async function lastEvents(h: Harness, projectId: number, limit = 5) {
  const rows = await h.deps.db
    .selectFrom('event')
    .select(['object_type', 'object_id', 'description'])
    .where('project_id', '=', projectId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows;
}

/**
 * POSTs each payload to `collectionUrl` and PUTs it to `itemUrl`: both answer 400 with the case's error. `more`
 * runs further refused requests; none of it changes the database.
 */
export async function expectValidationErrors(
  h: Harness,
  client: Client,
  collectionUrl: string,
  itemUrl: string,
  cases: Array<[unknown, string]>,
  more: () => Promise<void> = async () => {},
) {
  const before = await snapshot(h);
  for (const [payload, error] of cases) {
    const post = await client.post(collectionUrl, payload);
    expect(post.statusCode, JSON.stringify(payload)).toBe(400);
    expect(post.json().error).toBe(error);
    const put = await client.put(itemUrl, payload);
    expect(put.statusCode, JSON.stringify(payload)).toBe(400);
    expect(put.json().error).toBe(error);
  }
  await more();
  expect(await snapshot(h)).toEqual(before);
}

/**
 * An object of another project, addressed through `team`'s project at `url`: reading, its refs, updating with
 * `body` and deleting (as owner, and as admin) all answer 404, and nothing changes.
 */
export async function expectForeignNotFound(
  h: Harness,
  team: { owner: Client; admin: Client },
  url: string,
  body: unknown,
) {
  const before = await snapshot(h);
  expect((await team.owner.get(url)).statusCode).toBe(404);
  expect((await team.owner.get(`${url}/refs`)).statusCode).toBe(404);
  expect((await team.owner.put(url, body)).statusCode).toBe(404);
  expect((await team.owner.del(url)).statusCode).toBe(404);
  expect((await team.admin.del(url)).statusCode).toBe(404);
  expect(await snapshot(h)).toEqual(before);
}

/** Deleting the object at `url` answers 409 with `error` and the refs that use it, and changes nothing. */
export async function expectDeleteRefused(
  h: Harness,
  client: Client,
  url: string,
  error: string,
  refs: object,
) {
  const before = await snapshot(h);
  const del = await client.del(url);
  expect(del.statusCode).toBe(409);
  expect(del.json()).toMatchObject({ error, refs });
  expect(await snapshot(h)).toEqual(before);
}

/**
 * Updates the object at `url` with `body` (204; a member then reads `stored`), deletes it (204; then it is
 * `notFound`), and finds `events` as the project's three latest events, newest first.
 */
export async function expectUpdateThenDelete(
  h: Harness,
  team: { owner: Client; guest: Client; projectId: number },
  url: string,
  update: { body: object; stored: object },
  notFound: string,
  events: string[],
) {
  expect((await team.owner.put(url, update.body)).statusCode).toBe(204);
  expect((await team.guest.get(url)).json()).toMatchObject(update.stored);
  expect((await team.owner.del(url)).statusCode).toBe(204);
  expect((await team.owner.get(url)).json()).toMatchObject({ error: notFound });
  expect((await lastEvents(h, team.projectId, 3)).map((e) => e.description)).toEqual(events);
}
