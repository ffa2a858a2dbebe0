import { join } from 'node:path';
import { errorMessage, isWorkspaceName } from '@signalbox/contracts';
import type { AppTool } from '../../lib/apps';
import { type Job, TaskFailed } from '../run/job';
import { declaredSurveyVars, resolveInCheckout, taskArgs, templateArgs, valueText } from './common';

/** TF_VAR_<name>: Terraform variable names are letters, digits, "_" and "-". */
const isVariableName = (name: string) => /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/.test(name);

/**
 * terraform / tofu / terragrunt (the binary is the registry's path for the app): init, workspace
 * select-or-create, plan into a saved plan file; "No changes." or a plan-only task ends there; otherwise apply the
 * saved plan after confirmation (or at once when auto-approve is allowed). Variables from the environment JSON go
 * as -var; secrets as TF_VAR_*; each survey answer also as TF_VAR_<name> (for wrappers and modules that read the
 * environment; -var wins where both reach Terraform). Values in HCL form (`valueText`): text as it is, numbers
 * and booleans as their text, a multiselect's list and a kv's map as JSON (which HCL reads as a list / map). Terragrunt (`tfPath` set) drives that Terraform binary (--tf-path) without
 * prompts, and runs the workspace commands, which it has no shortcut for, through `run --`.
 */
export async function runTerraform(job: Job, tool: AppTool, opts: { tfPath?: string } = {}) {
  const d = job.details;
  const tp = d.templateParams;
  const params = d.params;
  const bin = d.template.app;
  const cwd = resolveInCheckout(job, 'directory');
  const workspace = d.inventory?.inventory?.trim() || 'default';
  if (!isWorkspaceName(workspace))
    throw new TaskFailed(`${errorMessage({ code: 'workspace_name' })}: nothing was run`);
  const env = job.baseEnv();
  env.TF_IN_AUTOMATION = '1';
  env.TF_INPUT = '0';
  if (opts.tfPath) env.TG_NON_INTERACTIVE = 'true';
  const declared = declaredSurveyVars(job);
  for (const [k, v] of Object.entries(d.extraVars))
    if (declared.has(k) && isVariableName(k) && v !== undefined) env[`TF_VAR_${k}`] = valueText(v);
  for (const [k, v] of Object.entries({ ...d.secretVars, ...d.surveySecrets })) {
    if (isVariableName(k)) env[`TF_VAR_${k}`] = valueText(v);
    else job.log(`Secret value ${JSON.stringify(k)} is not a valid variable name: not passed`);
  }
  /** Terragrunt's own flag, right after its command (where terragrunt reads its flags). */
  const tgFlags = opts.tfPath ? [`--tf-path=${opts.tfPath}`] : [];
  /** One command line: the registry's leading options, the command, terragrunt's flag, the command's arguments. */
  const command = ([name = '', ...rest]: string[]) => ({
    command: tool.path,
    args: [...tool.args, name, ...tgFlags, ...rest],
    cwd,
    env,
  });
  /** A workspace command: terragrunt passes it on to Terraform after `run --`. */
  const workspaceCommand = (args: string[]) =>
    opts.tfPath
      ? { command: tool.path, args: [...tool.args, 'run', ...tgFlags, '--', ...args], cwd, env }
      : command(args);

  const init = ['init', '-lock=false'];
  if (params.upgrade) init.push('-upgrade');
  init.push(params.reconfigure ? '-reconfigure' : '-migrate-state');
  await job.execOk(command(init), `${bin} init`);

  const list = await job.capture(workspaceCommand(['workspace', 'list']));
  job.throwIfStopped();
  if (list.code === 0) {
    await job.execOk(
      workspaceCommand(['workspace', 'select', '-or-create=true', workspace]),
      `${bin} workspace select`,
    );
  }

  const planArgs: string[] = [];
  if (params.destroy && tp.allow_destroy) planArgs.push('-destroy');
  for (const [k, v] of Object.entries(d.extraVars)) {
    if (k === 'semaphore_vars') continue;
    planArgs.push('-var', `${k}=${valueText(v)}`);
  }
  planArgs.push(...templateArgs(job), ...taskArgs(job));
  const planFile = join(job.dirs.tmp, 'signalbox.tfplan');
  job.secretFile('.keep', '');
  let noChanges = false;
  const unwatch = job.sink.watch((line) => {
    if (line.includes('No changes.')) noChanges = true;
  });
  try {
    await job.execOk(command(['plan', '-lock=false', ...planArgs, `-out=${planFile}`]), `${bin} plan`);
  } finally {
    unwatch();
  }
  // A plan-only task: the task's plan param, or its dry run (the run dialog's checkbox).
  if (noChanges || params.plan || job.task.dry_run) return;

  const autoApprove = Boolean(tp.auto_approve) || Boolean(tp.allow_auto_approve && params.auto_approve);
  if (!autoApprove) {
    const decision = await job.waitDecision();
    if (decision === 'rejected') throw new TaskFailed('The plan was rejected');
  }
  await job.execOk(command(['apply', '-lock=false', '-auto-approve', planFile]), `${bin} apply`);
}
