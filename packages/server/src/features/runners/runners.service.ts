import type { RunnerRegistrationToken, RunnerUpdateInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import { type EventKind, namedKind, recordEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import { now } from '../../db/values';
import type { Deps } from '../../deps';
import { randomToken, sha256 } from '../../lib/crypto';
import { conflict, notFound } from '../../lib/errors';
import { deleteRunner, findRunner, insertRegistrationToken, nameTaken, updateRunner } from './runners.store';

type Actor = { id: number };

/** How long a one-time registration token stays usable. */
export const REGISTRATION_TOKEN_TTL_MS = 60 * 60 * 1000;

/** `projectId` null: the global runners (admins); else that project's runners only. */
export async function getRunner(deps: Pick<Deps, 'db'>, projectId: number | null, id: number) {
  const runner = await findRunner(deps.db, projectId, id);
  if (!runner) throw notFound('runner');
  return runner;
}

const event = (
  user: Actor,
  projectId: number | null,
  id: number | null,
  description: string,
  kind: EventKind,
) => ({
  project_id: projectId,
  user_id: user.id,
  object_type: 'runner',
  object_id: id,
  description,
  ...kind,
});

export async function changeRunner(
  deps: Pick<Deps, 'db' | 'bus'>,
  user: Actor,
  projectId: number | null,
  id: number,
  input: RunnerUpdateInput,
) {
  const existing = await getRunner(deps, projectId, id);
  if (input.name !== undefined && (await nameTaken(deps.db, projectId, input.name, id)))
    throw conflict(coded('runner_name_taken', { name: input.name }));
  const name = input.name ?? existing.name;
  await transaction(deps.db, async (trx, onCommit) => {
    await updateRunner(trx, id, input);
    await recordEvent(
      trx,
      event(user, projectId, id, `Runner ${name} updated`, namedKind('runner', 'updated', name)),
    );
    // Enabled again, or given more room or other tags: its waiting tasks may start now, not at the next poll.
    onCommit(() => deps.bus.emit('runnerChanged', { runnerId: id }));
  });
  return getRunner(deps, projectId, id);
}

export async function removeRunner(
  deps: Pick<Deps, 'db'>,
  user: Actor,
  projectId: number | null,
  id: number,
) {
  const existing = await getRunner(deps, projectId, id);
  await transaction(deps.db, async (trx) => {
    await deleteRunner(trx, id);
    await recordEvent(
      trx,
      event(
        user,
        projectId,
        id,
        `Runner ${existing.name} deleted`,
        namedKind('runner', 'deleted', existing.name),
      ),
    );
  });
}

/**
 * Makes a one-time registration token for a global runner (`projectId` null) or a project runner. Only its
 * SHA-256 is stored: the token itself is in this answer and nowhere else.
 */
export async function createRegistrationToken(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: Actor,
  projectId: number | null,
): Promise<RunnerRegistrationToken> {
  const token = randomToken();
  const created = now();
  const expires_at = new Date(Date.parse(created) + REGISTRATION_TOKEN_TTL_MS).toISOString();
  await transaction(deps.db, async (trx) => {
    await insertRegistrationToken(trx, deps.dialect, {
      project_id: projectId,
      token_hash: sha256(token),
      user_id: user.id,
      created,
      expires_at,
    });
    await recordEvent(
      trx,
      event(user, projectId, null, 'Runner registration token created', { kind: 'runner.token', params: {} }),
    );
  });
  return { token, expires_at, project_id: projectId };
}
