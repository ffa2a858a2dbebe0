import type { ProjectRole } from '@signalbox/contracts';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Client, Harness } from './harness';

/** The callers of the project and team API tests, named as the tests name them. */
export type Actor = 'admin' | ProjectRole | 'non-member' | 'anonymous';
export const actors: Actor[] = [
  'admin',
  'owner',
  'manager',
  'task_runner',
  'guest',
  'non-member',
  'anonymous',
];

/**
 * A project with a member of every role (its owner is `creator`), a global admin who is no member and a signed-in
 * user outside the project.
 */
export type ProjectActors = {
  admin: Client;
  creator: Client;
  outsider: Client;
  projectId: number;
  members: Record<ProjectRole, Client>;
};

export async function createProjectActors(h: Harness, name?: string): Promise<ProjectActors> {
  const admin = await h.userClient({ admin: true });
  const creator = await h.userClient({ can_create_project: true });
  const outsider = await h.userClient();
  const { projectId, members } = await h.projectWithTeam(creator, name);
  return { admin, creator, outsider, projectId, members };
}

/** The client acting as `actor`: a fresh anonymous one, or one of `callers` (members stand for the roles). */
export function actorClient(
  h: Harness,
  callers: Pick<ProjectActors, 'admin' | 'outsider' | 'members'>,
  actor: Actor,
): Client {
  if (actor === 'admin') return callers.admin;
  if (actor === 'non-member') return callers.outsider;
  if (actor === 'anonymous') return h.anonymous();
  return callers.members[actor];
}

/**
 * Calls once per actor (in `actors` order) and checks each status code against `expected`, naming the actor in a
 * failure; `then` runs after each call with its answer, for what the call must have changed or not.
 */
export async function expectCodesByActor(
  h: Harness,
  callers: Pick<ProjectActors, 'admin' | 'outsider' | 'members'>,
  expected: Record<Actor, number>,
  call: (client: Client, actor: Actor) => Promise<LightMyRequestResponse>,
  then: (res: LightMyRequestResponse, actor: Actor) => unknown = () => {},
) {
  for (const actor of actors) {
    const res = await call(actorClient(h, callers, actor), actor);
    expect(res.statusCode, actor).toBe(expected[actor]);
    await then(res, actor);
  }
}

/** Members may call (reads); a non-member is refused, an anonymous caller must sign in. */
export const memberCodes = (ok: number): Record<Actor, number> => ({
  admin: ok,
  owner: ok,
  manager: ok,
  task_runner: ok,
  guest: ok,
  'non-member': 403,
  anonymous: 401,
});

/** Only owners may call (updateProject, manageProjectUsers); admins bypass. */
export const ownerCodes = (ok: number): Record<Actor, number> => ({
  admin: ok,
  owner: ok,
  manager: 403,
  task_runner: 403,
  guest: 403,
  'non-member': 403,
  anonymous: 401,
});
