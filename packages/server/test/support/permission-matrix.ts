import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Client, Harness } from './harness';

/**
 * The permission matrix of the project API tests: every kind of caller, a team holding one of each, the expected
 * status codes per permission, and helpers that call once per caller.
 */

export const roles = ['admin', 'owner', 'manager', 'task_runner', 'guest', 'outsider', 'anonymous'] as const;
export type Caller = (typeof roles)[number];

/** A project with a signed-in client per caller; `base` is the project's API path. */
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

/** Members may read; others are refused. */
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

/** Writes that need updateProject: only owners hold it, admins bypass. */
export const updateProjectCodes = (ok: number): Record<Caller, number> => ({
  admin: ok,
  owner: ok,
  manager: 403,
  task_runner: 403,
  guest: 403,
  outsider: 403,
  anonymous: 401,
});

/** Runs `call` as every caller (in matrix order) and returns the status codes, to compare with a matrix at once. */
export async function statusByCaller(
  clients: Record<Caller, Client>,
  call: (client: Client, caller: Caller) => Promise<{ statusCode: number }>,
) {
  const codes = {} as Record<Caller, number>;
  for (const caller of roles) codes[caller] = (await call(clients[caller], caller)).statusCode;
  return codes;
}

/** Calls once per caller (fresh setup each time when the call consumes something) and checks every code. */
export async function expectMatrix(
  clients: Record<Caller, Client>,
  expected: Record<Caller, number>,
  call: (client: Client, caller: Caller) => Promise<LightMyRequestResponse>,
) {
  const got: Record<string, number> = {};
  for (const caller of roles) {
    const res = await call(clients[caller], caller);
    got[caller] = res.statusCode;
    if (res.statusCode >= 400) expect(res.json()).toHaveProperty('error');
  }
  expect(got).toEqual(expected);
}
