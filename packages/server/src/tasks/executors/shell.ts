import type { AppTool } from '../../lib/apps';
import { type Job, TaskFailed } from '../run/job';
import { isStackName, resolveInCheckout, surveyAnswerEnv, taskArgs, templateArgs, valueText } from './common';

/**
 * A script app (the peer's shell apps): `<path> <registry args> <before…> <script> <template args> NAME=VALUE…
 * <task args>` in the repository (the peer's order). The script is the checked real path inside the checkout,
 * so it is absolute and never reads as an option; everything a template or task adds comes after it, where the
 * interpreter hands it to the script. The peer also passed `var` secrets as NAME=VALUE arguments; here they are
 * environment variables instead, as are secret survey values, so they never show in the process list. Every
 * survey answer is also an environment variable of its name (surveyAnswerEnv: lists and maps as JSON).
 */
async function runScript(
  job: Job,
  tool: AppTool,
  opts: { before: string[]; label: string; env?: Record<string, string> },
) {
  const d = job.details;
  const script = resolveInCheckout(job, 'file');
  const env = { ...opts.env, ...job.baseEnv() };
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  Object.assign(env, surveyAnswerEnv(job));
  const vars: string[] = [];
  for (const [k, v] of Object.entries(d.extraVars)) {
    if (k === 'semaphore_vars') continue;
    vars.push(`${k}=${valueText(v)}`);
  }
  await job.execOk(
    {
      command: tool.path,
      args: [...tool.args, ...opts.before, script, ...templateArgs(job), ...vars, ...taskArgs(job)],
      env,
    },
    opts.label,
  );
}

/** bash: `bash -- <script> …`; after `--` nothing can be a bash option. */
export const runBash = (job: Job, tool: AppTool) => runScript(job, tool, { before: ['--'], label: 'bash' });

/** powershell: `pwsh -NoProfile -NonInteractive -File <script> …`; after -File every argument goes to the script. */
export const runPowerShell = (job: Job, tool: AppTool) =>
  runScript(job, tool, { before: ['-File'], label: 'pwsh' });

/**
 * python: `python3 <script> …`; after the script every argument goes to it (sys.argv). Output is unbuffered so
 * the log follows the run (an environment may still set PYTHONUNBUFFERED itself).
 */
export const runPython = (job: Job, tool: AppTool) =>
  runScript(job, tool, { before: [], label: 'python3', env: { PYTHONUNBUFFERED: '1' } });

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
export async function runPulumi(job: Job, tool: AppTool) {
  const d = job.details;
  const stack = pulumiStack(job);
  const cwd = resolveInCheckout(job, 'directory');
  const env = job.baseEnv();
  for (const [k, v] of Object.entries(d.secretVars)) env[k] = v;
  Object.assign(env, surveyAnswerEnv(job));
  // Like a Terraform workspace: the stack is selected, or created on its first run.
  await job.execOk(
    {
      command: tool.path,
      args: [...tool.args, 'stack', 'select', '--create', '--non-interactive', stack],
      cwd,
      env,
    },
    'pulumi stack select',
  );
  const head = job.task.dry_run ? ['preview', '--stack', stack] : ['up', '--yes', '--stack', stack];
  await job.execOk(
    {
      command: tool.path,
      args: [...tool.args, ...head, ...templateArgs(job), ...taskArgs(job)],
      cwd,
      env,
    },
    'pulumi',
  );
}
