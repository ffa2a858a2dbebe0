import { type Job, TaskFailed } from '../job';
import { isStackName, resolveInCheckout, surveySecretEnv, taskArgs, templateArgs, valueText } from './common';

/**
 * bash: `bash -- <script> <template args> NAME=VALUE… <task args>` in the repository (the peer's order). The
 * script is the checked real path inside the checkout, after `--`, so no value can become a bash option. The
 * peer also passed `var` secrets as NAME=VALUE arguments; here they are environment variables instead, as are
 * secret survey values, so they never show in the process list.
 */
export async function runBash(job: Job) {
  const d = job.details;
  const script = resolveInCheckout(job, 'file');
  const env = job.baseEnv();
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  Object.assign(env, surveySecretEnv(job));
  const vars: string[] = [];
  for (const [k, v] of Object.entries(d.extraVars)) {
    if (k === 'semaphore_vars') continue;
    vars.push(`${k}=${valueText(v)}`);
  }
  await job.execOk(
    { command: 'bash', args: ['--', script, ...templateArgs(job), ...vars, ...taskArgs(job)], env },
    'bash',
  );
}

/** The stack: task params, template params, the inventory's text, else dev; checked before it reaches argv. */
function pulumiStack(job: Job): string {
  const d = job.details;
  const stack =
    valueText(d.params.stack ?? d.templateParams.stack ?? '') || d.inventory?.inventory?.trim() || 'dev';
  if (!isStackName(stack))
    throw new TaskFailed(
      `Pulumi stack ${JSON.stringify(stack.slice(0, 100))} is not a valid stack name (letters, digits, ".", "_", "-", up to two "/"; not starting with "-")`,
    );
  return stack;
}

/** pulumi stack select --create <stack>, then pulumi up --yes --stack <stack> (preview for a dry run) in <repo>/<playbook>. */
export async function runPulumi(job: Job) {
  const d = job.details;
  const stack = pulumiStack(job);
  const cwd = resolveInCheckout(job, 'directory');
  const env = job.baseEnv();
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  Object.assign(env, surveySecretEnv(job));
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
