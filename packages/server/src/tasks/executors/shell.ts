import { join } from 'node:path';
import { type Job, TaskFailed } from '../job';
import { taskArgs, templateArgs, valueText } from './common';

/**
 * bash: `bash <script> <template args> NAME=VALUE… <task args>` in the repository (the peer's order). The
 * peer also passed `var` secrets as NAME=VALUE arguments; here they are environment variables instead, so they
 * never show in the process list.
 */
export async function runBash(job: Job) {
  const d = job.details;
  const script = job.task.playbook || d.template.playbook;
  if (!script) throw new TaskFailed('The template has no script');
  const env = job.baseEnv();
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  const vars: string[] = [];
  for (const [k, v] of Object.entries(d.extraVars)) {
    if (k === 'semaphore_vars') continue;
    vars.push(`${k}=${valueText(v)}`);
  }
  await job.execOk(
    { command: 'bash', args: [script, ...templateArgs(job), ...vars, ...taskArgs(job)], env },
    'bash',
  );
}

/** pulumi stack select --create <stack>, then pulumi up --yes --stack <stack> (preview for a dry run) in <repo>/<playbook>. */
export async function runPulumi(job: Job) {
  const d = job.details;
  const stack =
    valueText(d.params.stack ?? d.templateParams.stack ?? '') || d.inventory?.inventory?.trim() || 'dev';
  const env = job.baseEnv();
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  const cwd = join(job.repoDir, d.template.playbook || '');
  // Like a Terraform workspace: the stack is selected, or created on its first run.
  await job.execOk(
    { command: 'pulumi', args: ['stack', 'select', '--create', '--non-interactive', stack], cwd, env },
    'pulumi stack select',
  );
  const head = job.task.dry_run ? ['preview', '--stack', stack] : ['up', '--yes', '--stack', stack];
  await job.execOk(
    {
      command: 'pulumi',
      args: [...head, ...templateArgs(job), ...taskArgs(job)],
      cwd,
      env,
    },
    'pulumi',
  );
}
