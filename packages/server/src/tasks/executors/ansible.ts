import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { appDefaults, DEFAULT_VAULT_NAME, vaultScriptProblem } from '@signalbox/contracts';
import { parseJson } from '../../db/values';
import type { AppTool } from '../../lib/apps';
import { checkoutRepository } from '../run/git';
import { type Job, TaskFailed } from '../run/job';
import { type Agent, startSshAgent } from '../run/keys';
import { hiddenFrom } from '../sandbox/confinement';
import type { RepositoryRow } from '../store';
import { extraVarsYaml, Unsafe } from './ansible-vars';
import { resolveInCheckout, stringList, taskArgs, taskDetails, templateArgs } from './common';

const objectValue = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const objectOf = (text: string | null | undefined) => objectValue(parseJson<unknown>(text, {}));

/**
 * Extra vars in the peer's precedence (environment JSON, task environment, environment secrets, secret survey
 * values), where everything the task supplied is marked unsafe (never templated) and the managers' own values
 * are kept as they are. semaphore_vars.task_details (message, commit message…) is data too.
 */
function extraVars(job: Job, webRoot: string): string {
  const d = job.details;
  const fromTask = objectOf(job.task.environment);
  const vars: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d.extraVars)) vars[k] = Object.hasOwn(fromTask, k) ? new Unsafe(v) : v;
  Object.assign(vars, d.secretVars);
  for (const [k, v] of Object.entries(d.surveySecrets)) vars[k] = new Unsafe(v);
  const details = taskDetails(job, webRoot);
  const current = vars.semaphore_vars;
  if (current instanceof Unsafe) {
    vars.semaphore_vars = new Unsafe({ ...objectValue(current.value), task_details: details });
  } else {
    vars.semaphore_vars = { ...objectValue(current), task_details: new Unsafe(details) };
  }
  return extraVarsYaml(vars);
}

/**
 * The task's limit/tags/skip_tags when the template allows overriding them, else the template's. A task limit
 * starting with "@" would make Ansible read host names from a file on the server: only the template may.
 */
function pickList(job: Job, name: 'limit' | 'tags' | 'skip_tags'): string[] {
  const { params, templateParams: tp } = job.details;
  const fromTask = tp[`allow_override_${name}`] ? stringList(params[name]) : [];
  if (!fromTask.length) return stringList(tp[name]);
  if (name === 'limit' && fromTask.some((l) => l.startsWith('@')))
    throw new TaskFailed('A task limit must not start with "@" (a file on the server): nothing was run');
  return fromTask;
}

/**
 * Where a vault password script is: an absolute path as it is (a program of the machine that runs the task, which
 * an administrator chose), else the real path of a file inside the checkout (symbolic links followed, never
 * leading out). Checked before anything runs.
 */
function vaultScriptPath(job: Job, script: string): string {
  const problem = vaultScriptProblem(script);
  if (problem) throw new TaskFailed(`${problem}: nothing was run`);
  const shown = JSON.stringify(script);
  if (isAbsolute(script)) {
    if (!statSync(script, { throwIfNoEntry: false })?.isFile())
      throw new TaskFailed(`Vault script ${shown} is not a file on this machine: nothing was run`);
    // A sandboxed task sees this one file of the machine besides the system, read-only; never the server's own.
    if (hiddenFrom(job.dirs.confinement, script))
      throw new TaskFailed(`Vault script ${shown} is among the server's own files: nothing was run`);
    if (job.confined) for (const path of new Set([script, realpathSync(script)])) job.share(path);
    return script;
  }
  let real: string;
  let root: string;
  try {
    root = realpathSync(job.repoDir);
    real = realpathSync(resolve(root, script));
  } catch {
    throw new TaskFailed(`Vault script ${shown} does not exist in the repository: nothing was run`);
  }
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new TaskFailed(
      `Vault script ${shown} leads outside the repository (a symbolic link?): nothing was run`,
    );
  if (!statSync(real).isFile())
    throw new TaskFailed(`Vault script ${shown} is not a file in the repository: nothing was run`);
  return real;
}

/**
 * The path ansible-playbook reads a file inventory from. An absolute path names a file of the machine (as the
 * inventory's editor chose it); a relative one is a file or directory of the checkout (`base`), checked by its real
 * path as the playbook is, so that a committed symbolic link or a "../" cannot read a file outside it.
 */
function inventoryFileOf(path: string, base: string): string {
  if (isAbsolute(path)) return path;
  const shown = JSON.stringify(path);
  let root: string;
  let real: string;
  try {
    root = realpathSync(base);
    real = realpathSync(resolve(root, path));
  } catch {
    throw new TaskFailed(`Inventory file ${shown} does not exist in the repository: nothing was run`);
  }
  const rel = relative(root, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new TaskFailed(
      `Inventory file ${shown} leads outside the repository (a symbolic link?): nothing was run`,
    );
  return real;
}

/**
 * `inventoryRepository`: the project's repository of that id, for a file inventory kept in another repository
 * (the database on the server, the job payload on a runner). `tool`: ansible-playbook as the app registry gives
 * it (its defaults when left out).
 */
export type AnsibleOptions = {
  inventoryRepository: (id: number) => Promise<RepositoryRow | null>;
  webRoot: string;
  tool?: AppTool;
};

/** ansible-galaxy beside a configured ansible-playbook path (the same installation) if there is one, else on PATH. */
function galaxyOf(playbookBinary: string) {
  const beside = isAbsolute(playbookBinary) ? join(dirname(playbookBinary), 'ansible-galaxy') : '';
  return beside && existsSync(beside) ? beside : 'ansible-galaxy';
}

/**
 * ansible-playbook with the argument order of the peer, except that every secret
 * reaches Ansible through 0600 files in the per-task temp dir or the environment — never argv.
 */
export async function runAnsible(job: Job, opts: AnsibleOptions) {
  const tool = opts.tool ?? appDefaults.ansible;
  const d = job.details;
  const tp = d.templateParams;
  const params = d.params;
  // Checked before anything runs (ssh-agent, inventory checkout).
  const playbook = resolveInCheckout(job, 'file');
  const limit = pickList(job, 'limit');
  const tags = pickList(job, 'tags');
  const skipTags = pickList(job, 'skip_tags');
  const env = job.baseEnv();
  env.PYTHONUNBUFFERED = '1';
  env.ANSIBLE_FORCE_COLOR = 'True';
  env.ANSIBLE_HOST_KEY_CHECKING = 'False';
  env.ANSIBLE_LOCAL_TEMP = join(job.dirs.tmp, 'ansible-local');
  const args: string[] = [];
  const agents: Agent[] = [];
  try {
    const inv = d.inventory;
    if (inv) {
      if (inv.type === 'static' || inv.type === 'static-yaml') {
        const name = `inventory_${inv.id}${inv.type === 'static-yaml' ? '.yml' : ''}`;
        args.push('-i', job.secretFile(name, inv.inventory));
      } else if (inv.type === 'file') {
        let base = job.repoDir;
        if (inv.repository_id) {
          const repo = await opts.inventoryRepository(inv.repository_id);
          if (!repo) throw new TaskFailed(`Inventory repository ${inv.repository_id} not found`);
          const co = await checkoutRepository(job, repo, {
            branch: repo.git_branch || 'main',
            commitHash: null,
            target: join(job.dirs.task, `inventory_${inv.id}`),
          });
          base = co.dir;
        }
        args.push('-i', inventoryFileOf(inv.inventory, base));
      } else {
        throw new TaskFailed(`Inventory type ${inv.type} cannot be used with Ansible`);
      }
      if (inv.ssh_key_id) {
        const key = await job.loadKey(inv.ssh_key_id);
        if (key?.type === 'ssh') {
          if (key.login) args.push('--user', key.login);
          const agent = await startSshAgent(job, key, 'inventory key');
          agents.push(agent);
          env.SSH_AUTH_SOCK = agent.sock;
        } else if (key?.type === 'login_password') {
          if (key.login) args.push('--user', key.login);
          env.ANSIBLE_CONNECTION_PASSWORD_FILE = job.secretFile('connection-password', key.password);
        }
      }
      if (inv.become_key_id) {
        const key = await job.loadKey(inv.become_key_id);
        if (key?.type === 'login_password') {
          if (key.login) args.push('--become-user', key.login);
          env.ANSIBLE_BECOME_PASSWORD_FILE = job.secretFile('become-password', key.password);
        }
      }
    }

    if (tp.allow_debug && job.task.debug) {
      const level = Math.min(6, Math.max(1, Number(params.debug_level ?? 4) || 4));
      args.push(`-${'v'.repeat(level)}`);
    }
    if (job.task.diff) args.push('--diff');
    if (job.task.dry_run) args.push('--check');

    // The template's vault under its own name: a password key (through a 0600 file) or a script Ansible runs.
    const vaultName = d.template.vault_name || DEFAULT_VAULT_NAME;
    if (d.template.vault_script) {
      args.push('--vault-id', `${vaultName}@${vaultScriptPath(job, d.template.vault_script)}`);
    } else if (d.template.vault_key_id) {
      const vault = await job.loadKey(d.template.vault_key_id);
      if (vault?.password) {
        args.push('--vault-id', `${vaultName}@${job.secretFile('vault-password', vault.password)}`);
      }
    }

    args.push('--extra-vars', `@${job.secretFile('extra-vars.yml', extraVars(job, opts.webRoot))}`);

    args.push(...templateArgs(job));
    if (limit.length) args.push(`--limit=${limit.join(',')}`);
    if (tags.length) args.push(`--tags=${tags.join(',')}`);
    if (skipTags.length) args.push(`--skip-tags=${skipTags.join(',')}`);
    args.push(...taskArgs(job));
    // The checked real path, after "--": never read as an option, never outside the checkout.
    args.push('--', playbook);

    await installRequirements(job, env, playbook, galaxyOf(tool.path));
    job.throwIfStopped();
    await job.execOk({ command: tool.path, args: [...tool.args, ...args], env }, 'ansible-playbook');
  } finally {
    for (const a of agents) a.stop();
  }
}

/**
 * Galaxy collections then roles (the peer's file list), each skipped while the file's hash equals the hash
 * stamped at its last successful install (stamps live in the project's home, which persists across tasks).
 */
async function installRequirements(job: Job, env: Record<string, string>, playbook: string, galaxy: string) {
  const repo = realpathSync(job.repoDir);
  const playbookDir = dirname(playbook);
  /** A kind's own file in its folder first, then the shared one: beside the playbook, then at the repository root. */
  const requirementFiles = (folder: string) => [
    join(playbookDir, folder, 'requirements.yml'),
    join(playbookDir, 'requirements.yml'),
    join(repo, folder, 'requirements.yml'),
    join(repo, 'requirements.yml'),
  ];
  const kinds = [
    { kind: 'collection', files: requirementFiles('collections') },
    { kind: 'role', files: requirementFiles('roles') },
  ];
  // A confined task's HOME is its own: what an earlier task installed is gone, so nothing is skipped.
  const stampDir = job.confined ? null : join(job.dirs.home, '.signalbox-galaxy');
  for (const { kind, files } of kinds) {
    for (const file of [...new Set(files)]) {
      if (!existsSync(file)) continue;
      const rel = relative(repo, file);
      const hash = createHash('md5').update(readFileSync(file)).digest('hex');
      const stamp =
        stampDir &&
        join(
          stampDir,
          `${createHash('sha1')
            .update(`${job.details.repository?.id ?? 0}:${job.details.template.id}:${rel}`)
            .digest('hex')}_${kind}.md5`,
        );
      if (stamp && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
        job.log(`${rel} has not changed: skipping ansible-galaxy ${kind} install`);
        continue;
      }
      await job.execOk(
        { command: galaxy, args: [kind, 'install', '-r', file, '--force'], env },
        `ansible-galaxy ${kind} install`,
      );
      if (stampDir && stamp) {
        mkdirSync(stampDir, { recursive: true });
        writeFileSync(stamp, hash);
      }
    }
  }
}
