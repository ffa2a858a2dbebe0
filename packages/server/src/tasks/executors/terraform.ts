import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_LOCK_TIMEOUT,
  errorMessage,
  isWorkspaceName,
  lockTimeoutMs,
  PLAN_FILE_MAX_BYTES,
} from '@signalbox/contracts';
import type { AppTool } from '../../lib/apps';
import { type Job, TaskFailed } from '../run/job';
import { declaredSurveyVars, resolveInCheckout, taskArgs, templateArgs, valueText } from './common';
import { driftRulesOf, judgeDrift } from './terraform-drift';
import {
  lockFailure,
  lockFailureMessage,
  PLAN_JSON_MAX_BYTES,
  priorStateOf,
  readPlanJson,
  summarisePlanJson,
} from './terraform-plan';

const sha256File = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Said (and the task's reason) when a person rejected the plan. */
const planRejectedMessage = 'The plan was rejected';

/** Said (and the task's reason) when a plan file is not the one approved. */
export const planChangedMessage =
  'The plan file changed after it was approved (its SHA-256 differs): it was not applied';

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
 *
 * The state is always locked: every command that takes the lock waits for it up to the template's lock timeout
 * (-lock-timeout, default 5m), and a run that cannot get it ends with a message saying the state is locked (and
 * by whom, when Terraform says). After the plan, `show -json` of the saved plan gives its summary (counts and
 * the changed attribute names, never values), kept with the task before it waits for confirmation, with the plan
 * file's SHA-256 and the state it was made from; a plan-only task also keeps the plan file itself (sealed on the
 * server), so that a later task may apply it. The plan applied is the plan approved: the file is hashed again
 * just before `apply`, and a file that changed meanwhile is not applied.
 *
 * A task that applies a stored plan (`details.applyPlan`) does not plan: it writes that plan file, checks its
 * digest against the approved one, and applies it. A drift check (`params.drift_check`) runs a refresh-only plan
 * and a normal plan with -detailed-exitcode, judges drift from their JSON under the template's ignore rules, and
 * reports it (see terraform-drift.ts).
 */
export async function runTerraform(
  job: Job,
  tool: AppTool,
  opts: { tfPath?: string; stateUrl?: string } = {},
) {
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
  const backend = d.stateBackend;
  if (backend) useBuiltInBackend(job, env, backend, opts.stateUrl ?? '');
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

  const configured = typeof tp.lock_timeout === 'string' ? tp.lock_timeout.trim() : '';
  let lockTimeout = DEFAULT_LOCK_TIMEOUT;
  if (configured && lockTimeoutMs(configured) !== null) lockTimeout = configured;
  else if (configured)
    job.log(
      `Lock timeout ${JSON.stringify(configured)} is not a duration such as 30s or 5m: ${lockTimeout} is used`,
    );
  const lockFlag = `-lock-timeout=${lockTimeout}`;
  /**
   * A command that takes the state lock: one that fails because another run holds the lock ends the task with
   * a message saying so, from Terraform's own lock error (its "Lock Info" names who holds it).
   */
  const execLocked = async (spec: ReturnType<typeof command>, what: string, okCodes: number[] = [0]) => {
    let lockLines: string[] | null = null;
    const unwatchLock = job.sink.watch((line) => {
      if (lockLines) {
        if (lockLines.length < 40) lockLines.push(line);
      } else if (lockFailure(line)) lockLines = [line];
    });
    try {
      const result = await job.exec(spec);
      if (result.code !== null && okCodes.includes(result.code)) return result;
      const locked = lockLines ? lockFailure((lockLines as string[]).join('\n')) : null;
      const failed = `${what} failed with ${result.signal ? `signal ${result.signal}` : `exit code ${result.code}`}`;
      if (locked) throw new TaskFailed(failed, lockFailureMessage(locked.holder, lockTimeout));
      throw new TaskFailed(failed);
    } finally {
      unwatchLock();
    }
  };

  const init = ['init', lockFlag];
  if (params.upgrade) init.push('-upgrade');
  init.push(params.reconfigure ? '-reconfigure' : '-migrate-state');
  await execLocked(command(init), `${bin} init`);

  // The http backend has one workspace: the built-in backend keeps each workspace as a state of its own.
  const list = backend ? null : await job.capture(workspaceCommand(['workspace', 'list']));
  job.throwIfStopped();
  if (list?.code === 0) {
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
  const apply = () => execLocked(command(['apply', lockFlag, '-auto-approve', planFile]), `${bin} apply`);

  // A stored plan, approved: applied as it is, never planned again.
  if (d.applyPlan) {
    const stored = d.applyPlan;
    if (stored.commit_hash && d.task.commit_hash && stored.commit_hash !== d.task.commit_hash)
      throw new TaskFailed(
        `The plan was made from commit ${stored.commit_hash}, not ${d.task.commit_hash}: it was not applied`,
      );
    if (stored.workspace !== workspace)
      throw new TaskFailed(
        `The plan was made for workspace ${stored.workspace}, not ${workspace}: it was not applied`,
      );
    job.secretFile('signalbox.tfplan', Buffer.from(stored.file, 'base64'));
    if (sha256File(planFile) !== stored.digest) throw new TaskFailed(planChangedMessage, planChangedMessage);
    job.log(`Applying the plan of task ${stored.task_id} (SHA-256 ${stored.digest})`);
    await apply();
    return;
  }

  if (params.drift_check) {
    await checkDrift(job, { command, execLocked, planArgs, lockFlag, bin, workspace });
    return;
  }

  let noChanges = false;
  const unwatch = job.sink.watch((line) => {
    if (line.includes('No changes.')) noChanges = true;
  });
  try {
    await execLocked(command(['plan', lockFlag, ...planArgs, `-out=${planFile}`]), `${bin} plan`);
  } finally {
    unwatch();
  }
  // A plan-only task: the task's plan param, or its dry run (the run dialog's checkbox).
  if (noChanges) return;
  const planOnly = Boolean(params.plan || job.task.dry_run);
  const digest = await keepPlanSummary(job, command(['show', '-json', planFile]), bin, {
    planFile,
    workspace,
    keepFile: planOnly,
  });
  if (planOnly) return;

  const autoApprove = Boolean(tp.auto_approve) || Boolean(tp.allow_auto_approve && params.auto_approve);
  if (!autoApprove) {
    const decision = await job.waitDecision();
    if (decision === 'rejected') throw new TaskFailed(planRejectedMessage, planRejectedMessage);
  }
  // The plan applied is the plan shown and approved: a file changed since (by anything the task ran) is refused.
  if (sha256File(planFile) !== digest) throw new TaskFailed(planChangedMessage, planChangedMessage);
  await apply();
}

type Spec = { command: string; args: string[]; cwd: string; env: Record<string, string> };
type Commands = {
  command: (args: string[]) => Spec;
  execLocked: (spec: Spec, what: string, okCodes?: number[]) => Promise<{ code: number | null }>;
  planArgs: string[];
  lockFlag: string;
  bin: string;
  workspace: string;
};

/**
 * A drift check: `plan -refresh-only -detailed-exitcode` (what changed outside Terraform) and a normal plan with
 * -detailed-exitcode (what differs from the configuration), both plan-only; exit code 2 is "there are changes".
 * The drift is judged from both plans' JSON under the template's ignore rules and reported; the normal plan's
 * summary (and file) is kept as a plan-only task's.
 */
async function checkDrift(job: Job, c: Commands) {
  const refreshFile = join(job.dirs.tmp, 'signalbox-refresh.tfplan');
  const planFile = join(job.dirs.tmp, 'signalbox.tfplan');
  const refresh = await c.execLocked(
    c.command([
      'plan',
      c.lockFlag,
      '-refresh-only',
      '-detailed-exitcode',
      ...c.planArgs,
      `-out=${refreshFile}`,
    ]),
    `${c.bin} plan -refresh-only`,
    [0, 2],
  );
  let refreshJson: unknown = null;
  if (refresh.code === 2) {
    refreshJson = await showJson(job, c.command(['show', '-json', refreshFile]));
    if (refreshJson === null)
      throw new TaskFailed(`${c.bin} show -json did not give the refresh-only plan's JSON`);
  }
  const plan = await c.execLocked(
    c.command(['plan', c.lockFlag, '-detailed-exitcode', ...c.planArgs, `-out=${planFile}`]),
    `${c.bin} plan`,
    [0, 2],
  );
  let planJson: unknown = null;
  if (plan.code === 2) {
    planJson = await showJson(job, c.command(['show', '-json', planFile]));
    if (planJson === null) throw new TaskFailed(`${c.bin} show -json did not give the plan's JSON`);
    await savePlan(job, planJson, { planFile, workspace: c.workspace, keepFile: true });
  }
  const report = judgeDrift(refreshJson, planJson, driftRulesOf(job.details.templateParams));
  // Addresses may carry a secret (a for_each key): masked as in the log.
  const masked = {
    ...report,
    resources: report.resources.map((r) => ({
      ...r,
      address: job.sink.mask(r.address),
      paths: r.paths.map((p) => job.sink.mask(p)),
    })),
  };
  const count = report.resources.length + report.omitted;
  job.log(
    report.drifted
      ? `Drift found: ${count} ${count === 1 ? 'resource differs' : 'resources differ'} from the configuration or the state (${report.ignored} ignored by the template's rules)`
      : `No drift${report.ignored ? ` (${report.ignored} ignored by the template's rules)` : ''}`,
  );
  await job.saveDrift(masked);
}

/** The JSON of `show -json`; null when the command failed or did not print a plan's JSON (too large included). */
async function showJson(job: Job, spec: Parameters<Job['capture']>[0]): Promise<unknown> {
  const shown = await job.capture(spec, undefined, { maxBytes: PLAN_JSON_MAX_BYTES });
  if (shown.overflow) {
    job.log(`The plan is larger than ${PLAN_JSON_MAX_BYTES / 1_048_576} MiB as JSON: no summary is kept`);
    return null;
  }
  return shown.code === 0 ? readPlanJson(shown.stdout) : null;
}

/**
 * Reads the saved plan back as JSON (`show -json`, the same binary, environment and sandbox as the plan) and keeps
 * its summary with the task, with the plan file's digest (returned). A plan that cannot be read or summarised is
 * said in the log; the run goes on (the log still shows the plan).
 */
async function keepPlanSummary(
  job: Job,
  spec: Parameters<Job['capture']>[0],
  bin: string,
  plan: { planFile: string; workspace: string; keepFile: boolean },
): Promise<string> {
  const json = await showJson(job, spec);
  if (json === null) job.log(`${bin} show -json did not give the plan's JSON: no summary is kept`);
  return savePlan(job, json, plan);
}

/** Keeps the summary of a plan's JSON (when there is one) and its file's facts; returns the file's digest. */
async function savePlan(
  job: Job,
  json: unknown,
  plan: { planFile: string; workspace: string; keepFile: boolean },
): Promise<string> {
  const digest = sha256File(plan.planFile);
  const summary = json === null ? null : summarisePlanJson(json);
  if (!summary) return digest;
  let file: string | null = null;
  if (plan.keepFile) {
    const size = statSync(plan.planFile).size;
    if (size <= PLAN_FILE_MAX_BYTES) file = readFileSync(plan.planFile).toString('base64');
    else
      job.log(
        `The plan file is larger than ${PLAN_FILE_MAX_BYTES / 1_048_576} MiB: it is not kept, so no later task can apply it`,
      );
  }
  // Names are kept, never values; a secret that made its way into an address (a for_each key) is masked as in
  // the log.
  const mask = (text: string) => job.sink.mask(text);
  const prior = priorStateOf(json);
  await job.savePlan(
    {
      ...summary,
      changes: summary.changes.map((c) => ({
        ...c,
        address: mask(c.address),
        attributes: c.attributes.map(mask),
        sensitive: c.sensitive.map(mask),
      })),
    },
    { digest, workspace: plan.workspace, state_lineage: prior.lineage, state_serial: prior.serial, file },
  );
  return digest;
}

/**
 * Points Terraform's `http` backend at the built-in state backend through the environment (never argv): the
 * state's address for reading, writing, locking and unlocking (LOCK/UNLOCK on the same address), and the run's
 * own credentials, good only while the task runs. The configuration names `backend "http" {}` and nothing more.
 */
function useBuiltInBackend(
  job: Job,
  env: Record<string, string>,
  backend: NonNullable<Job['details']['stateBackend']>,
  stateUrl: string,
) {
  const address = `${stateUrl.replace(/\/+$/, '')}${backend.path}`;
  env.TF_HTTP_ADDRESS = address;
  env.TF_HTTP_LOCK_ADDRESS = address;
  env.TF_HTTP_UNLOCK_ADDRESS = address;
  env.TF_HTTP_USERNAME = backend.username;
  env.TF_HTTP_PASSWORD = backend.password;
  job.log(`State: the built-in state backend, state ${JSON.stringify(backend.state)} (${address})`);
}
