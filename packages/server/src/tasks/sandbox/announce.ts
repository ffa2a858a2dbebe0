import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config';
import { serverConfinement } from './confinement';
import { isolationMode } from './isolation';

/**
 * Says at start how tasks will be held together (cgroup or session) and confined (bubblewrap or not): an error
 * when a required mode is unavailable (tasks will fail), a loud warning when the sandbox is off because the
 * machine cannot run it.
 */
export function announceTaskConfinement(
  log: FastifyBaseLogger,
  config: Parameters<typeof serverConfinement>[0] & Pick<Config, 'taskIsolation'>,
) {
  const isolation = isolationMode(config.taskIsolation);
  if (config.taskIsolation === 'cgroup' && isolation.mode !== 'cgroup')
    log.error(
      { reason: isolation.reason },
      'task isolation: cgroup required but unavailable; tasks will fail',
    );
  else log.info(isolation, `task isolation: ${isolation.mode}`);
  const sandbox = serverConfinement(config);
  if (sandbox.mode === 'bwrap')
    log.info({ paths: sandbox.paths, user: sandbox.user?.name }, 'task sandbox: bwrap');
  else if (sandbox.mode === 'refused')
    log.error({ reason: sandbox.reason }, 'task sandbox: bwrap required but unavailable; tasks will fail');
  else if (sandbox.reason)
    log.warn(
      { reason: sandbox.reason },
      "TASK SANDBOX IS OFF: bubblewrap cannot run here, so tasks run with the server's rights and can read its data, keys and other projects' files. Install bubblewrap, run tasks on remote runners, or set SIGNALBOX_TASK_SANDBOX=off to accept this",
    );
  else log.warn('task sandbox: off (SIGNALBOX_TASK_SANDBOX=off): tasks can read everything the server can');
}
