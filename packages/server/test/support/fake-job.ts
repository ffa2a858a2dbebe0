import { join } from 'node:path';
import { Job, type JobDetails } from '../../src/tasks/run/job';
import type { TaskLog } from '../../src/tasks/run/run-core';
import type { ProcessAdapter } from '../../src/tasks/sandbox/process';

/**
 * A run's details with nothing in them but what `fields` gives: project 1, no inventory, repository or environment,
 * no variables, secrets or parameters, started by alice.
 */
export function jobDetails(fields: Pick<JobDetails, 'task' | 'template'> & Partial<JobDetails>): JobDetails {
  return {
    project: { id: 1 } as JobDetails['project'],
    inventory: null,
    repository: null,
    environment: null,
    extraVars: {},
    envVars: {},
    secretVars: {},
    secretEnv: {},
    surveySecrets: {},
    params: {},
    templateParams: {},
    incomingVersion: null,
    userName: 'alice',
    ...fields,
  };
}

/**
 * A Job of `details` over `processes` (fake ones, see fake-processes.ts) in the task directory `taskDir`, with its
 * temp dir and repository cache inside it and HOME at `home`. It keeps its log lines in `lines`, masks nothing
 * and has every plan it asks about confirmed.
 */
export function jobIn(details: JobDetails, processes: ProcessAdapter, taskDir: string, home = taskDir) {
  const lines: string[] = [];
  const sink = {
    line: (l: string) => lines.push(l),
    pressure: () => false,
    onDrain() {},
    mask: (t: string) => t,
    addSecrets() {},
    watch: () => () => {},
  } as unknown as TaskLog;
  const job = new Job(
    details,
    sink,
    processes,
    {
      task: taskDir,
      tmp: join(taskDir, 'tmp'),
      home,
      reposCache: join(taskDir, 'repos'),
      owner: 'x',
      isolation: 'auto',
      confinement: { mode: 'off' },
    },
    async () => null,
    async () => {},
    async () => 'confirmed',
  );
  return { job, lines };
}
