import type { LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
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

/**
 * The matrix tests of a project resource collection (`<base>/<collection>` with `/:id` and `/:id/refs`): members
 * read, writers of project resources create, update and delete. `team` is read when a test runs (set in beforeAll);
 * `create` makes a fresh object, `body` is the request body of a POST or PUT.
 */
export function resourceMatrixTests(
  team: () => Team,
  collection: string,
  create: () => Promise<{ id: number }>,
  body: (caller: Caller, method: 'POST' | 'PUT') => unknown,
) {
  const url = (id?: number) => `${team().base}/${collection}${id === undefined ? '' : `/${id}`}`;
  it(`GET ${collection}`, async () => {
    await expectMatrix(team(), readCodes(), (c) => c.get(url()));
  });
  it(`GET ${collection}/:id`, async () => {
    const made = await create();
    await expectMatrix(team(), readCodes(), (c) => c.get(url(made.id)));
  });
  it(`GET ${collection}/:id/refs`, async () => {
    const made = await create();
    await expectMatrix(team(), readCodes(), (c) => c.get(`${url(made.id)}/refs`));
  });
  it(`POST ${collection}`, async () => {
    await expectMatrix(team(), writeCodes(201), (c, caller) => c.post(url(), body(caller, 'POST')));
  });
  it(`PUT ${collection}/:id`, async () => {
    const made = await create();
    await expectMatrix(team(), writeCodes(204), (c, caller) => c.put(url(made.id), body(caller, 'PUT')));
  });
  it(`DELETE ${collection}/:id`, async () => {
    await expectMatrix(team(), writeCodes(204), async (c) => c.del(url((await create()).id)));
  });
}

/** Calls once per caller (as `statusByCaller` does) and checks the status codes against `expected` at once. */
export async function expectStatusByCaller(
  clients: Record<Caller, Client>,
  expected: Record<Caller, number>,
  call: (client: Client, caller: Caller) => Promise<{ statusCode: number }>,
  message?: string,
) {
  expect(await statusByCaller(clients, call), message).toEqual(expected);
}

/**
 * The write tests of a project collection (`<base>/<collection>` with `/:id`) checked by status code alone:
 * creating, updating and deleting need manageProjectResources. `project` is read when a test runs (set in
 * beforeAll); `updated` makes the object every caller updates, `deleted` a fresh object per caller to delete, and
 * `body` is the request body of a POST or PUT.
 */
export function manageResourceStatusTests(
  project: () => { clients: Team; base: string },
  collection: string,
  objects: {
    body: (caller: Caller, method: 'POST' | 'PUT') => unknown;
    updated: () => Promise<number>;
    deleted: (caller: Caller) => Promise<number>;
  },
) {
  const url = () => `${project().base}/${collection}`;
  it(`POST ${collection} needs manageProjectResources`, async () => {
    await expectStatusByCaller(project().clients, writeCodes(201), (c, caller) =>
      c.post(url(), objects.body(caller, 'POST')),
    );
  });
  it(`PUT ${collection}/{id} needs manageProjectResources`, async () => {
    const id = await objects.updated();
    await expectStatusByCaller(project().clients, writeCodes(204), (c, caller) =>
      c.put(`${url()}/${id}`, objects.body(caller, 'PUT')),
    );
  });
  it(`DELETE ${collection}/{id} needs manageProjectResources`, async () => {
    await expectStatusByCaller(project().clients, writeCodes(204), async (c, caller) =>
      c.del(`${url()}/${await objects.deleted(caller)}`),
    );
  });
}
