import type { JobDetails, Key } from '../tasks/run/job';
import type { RepositoryRow } from '../tasks/store';

/**
 * What a runner needs to run one task, sealed to the runner's public key (see seal.ts) in the `job` message: the
 * task's details as the server's own run reads them (environment, extra vars, environment and survey secrets
 * filled in), every access key the run may use with its secret decrypted (inventory ssh/become keys, repository
 * keys, vault keys), and the repository of a file inventory kept in another repository. The runner runs it with
 * its own app registry (SIGNALBOX_APPS on the runner's machine) and its own work directory.
 */
export type JobPayload = {
  details: JobDetails;
  keys: Record<string, Key>;
  inventory_repository: RepositoryRow | null;
};
