import { coded } from '@signalbox/contracts';
import type { Deps } from '../../deps';
import { randomToken, safeEqual, sha256 } from '../../lib/crypto';
import { badRequest, fieldError } from '../../lib/errors';
import type { RunnerRegistration } from '../../runner-protocol/protocol';
import { isRunnerPublicKey } from '../../runner-protocol/seal';
import {
  databaseIso,
  findRegistrationToken,
  spendRegistrationToken,
} from '../../runners/server/runners.store';

/** A runner's token as the server keeps it. */
export const runnerTokenOf = (token: string) => sha256(token);
export const newRunnerToken = () => randomToken(32);

/** A bad public key is a 400, before any token is looked at. */
export function checkRunnerPublicKey(input: RunnerRegistration) {
  if (!isRunnerPublicKey(input.public_key))
    throw fieldError('public_key', coded('runner_public_key', { field: 'public_key' }));
}

/**
 * A registration with a one-time token, spent here (one registration only, however many race for it): a runner of
 * the token's project (or global). Null: no usable one-time token of that value. A project other than the token's
 * is a 400.
 */
export async function oneTimeRegistration(
  deps: Pick<Deps, 'db' | 'dialect'>,
  input: RunnerRegistration,
): Promise<{ projectId: number | null } | null> {
  const row = await findRegistrationToken(deps.db, runnerTokenOf(input.registration_token));
  if (!row) return null;
  const projectId = row.project_id;
  if (input.project_id !== undefined && input.project_id !== projectId)
    throw badRequest(
      projectId === null ? coded('registration_token_global') : coded('registration_token_other_project'),
    );
  if (!(await spendRegistrationToken(deps.db, row.id, new Date().toISOString(), await databaseIso(deps))))
    return null;
  return { projectId };
}

/**
 * A registration with the global token (SIGNALBOX_RUNNER_REGISTRATION_TOKEN): a global runner, or a project
 * runner of the project it names (an unknown project is a 400). Null: not the global token.
 */
export async function globalRegistration(
  deps: Pick<Deps, 'db' | 'config'>,
  input: RunnerRegistration,
): Promise<{ projectId: number | null } | null> {
  const global = deps.config.runnerRegistrationToken;
  if (!global || !safeEqual(input.registration_token, global)) return null;
  if (input.project_id === undefined) return { projectId: null };
  const project = await deps.db
    .selectFrom('project')
    .select('id')
    .where('id', '=', input.project_id)
    .executeTakeFirst();
  if (!project) throw badRequest(coded('project_not_found', { id: input.project_id }));
  return { projectId: input.project_id };
}
