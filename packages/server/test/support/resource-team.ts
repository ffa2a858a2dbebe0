import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Client, Harness } from './harness';

/** Shared helpers for the project-resource API tests (keys, repositories, inventory, environments). */

export const roles = ['admin', 'owner', 'manager', 'task_runner', 'guest', 'outsider', 'anonymous'] as const;
export type Caller = (typeof roles)[number];

export type Team = { projectId: number; base: string } & Record<Caller, Client>;

/** A project with a member of every role, a global admin who is no member, an outsider and an anonymous caller. */
export async function createTeam(h: Harness, name = 'Resources'): Promise<Team> {
  const owner = await h.userClient({ can_create_project: true });
  const { projectId, members } = await h.projectWithTeam(owner, name);
  return {
    projectId,
    base: `/api/project/${projectId}`,
    admin: await h.userClient({ admin: true }),
    outsider: await h.userClient(),
    anonymous: h.anonymous(),
    ...members,
  };
}

export const readCodes = (ok = 200): Record<Caller, number> => ({
  admin: ok,
  owner: ok,
  manager: ok,
  task_runner: ok,
  guest: ok,
  outsider: 403,
  anonymous: 401,
});

/** Writes need manageProjectResources: owners and managers hold it, admins bypass. */
export const writeCodes = (ok: number): Record<Caller, number> => ({
  admin: ok,
  owner: ok,
  manager: ok,
  task_runner: 403,
  guest: 403,
  outsider: 403,
  anonymous: 401,
});

/** Calls once per caller (fresh setup each time when the call consumes something) and checks every code. */
export async function expectMatrix(
  team: Team,
  expected: Record<Caller, number>,
  call: (client: Client, caller: Caller) => Promise<LightMyRequestResponse>,
) {
  const got: Record<string, number> = {};
  for (const caller of roles) {
    const res = await call(team[caller], caller);
    got[caller] = res.statusCode;
    if (res.statusCode >= 400) expect(res.json()).toHaveProperty('error');
  }
  expect(got).toEqual(expected);
}

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

/** Bodies every POST/PUT must refuse whatever its fields: malformed JSON and non-objects. */
export const malformedBodies: unknown[] = ['{"name": ', '[1,2', 'null', '"text"', '42', [1, 2]];

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
