import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DriftReport, PlanSummary } from '@signalbox/contracts';
import type { Config } from '../../config';
import type { SecretBox } from '../../lib/crypto';
import { KeySourceError, keySecretOf } from '../../lib/key-sources';
import { confine } from '../sandbox/confine';
import { type Confinement, handOver, type SandboxPath, visiblePath } from '../sandbox/confinement';
import { IsolationUnavailable, openTaskSandbox } from '../sandbox/isolation';
import type { ExitResult, LineTarget, ProcessAdapter, ProcessSpec, TaskProcess } from '../sandbox/process';
import type { IsolationSetting, TaskSandbox } from '../sandbox/sandbox';
import type {
  EnvironmentRow,
  InventoryRow,
  KeyRow,
  ProjectRow,
  RepositoryRow,
  TaskRow,
  TemplateRow,
} from '../store';
import type { PlanFacts, StoredPlan } from '../terraform-plans.store';
import { OUTPUTS_ENV, SECRET_OUTPUTS_ENV } from './outputs';

/** Where a run's output goes: the server's LogSink (database) or a runner's batches (WebSocket). */
export interface TaskLog extends LineTarget {
  /** Registers values to mask in every later line. */
  addSecrets(values: Iterable<string | null | undefined>): void;
  mask(text: string): string;
  /** Lets an executor look at lines as they arrive (Terraform's "No changes."). */
  watch(listener: (line: string) => void): () => void;
  /** Delivers everything still pending. */
  close(): Promise<void>;
  /** Lines that could not be stored (the database refused them or stayed unavailable); none when absent. */
  readonly lost?: number;
}

/** Said as a task's last line, and as its error instead of success, when some of its output could not be stored. */
export const lostOutputMessage = (lines: number) =>
  `The output is incomplete: ${lines} ${lines === 1 ? 'line' : 'lines'} could not be stored (see the server log)`;

/** Thrown when a stop request ends the task; the engine turns it into `stopped`. */
export class Stopped extends Error {
  constructor() {
    super('Task stopped');
  }
}

/**
 * Thrown for an ordinary task failure; its message is logged as the last line. `reason`, when given, is also the
 * task's status message (a failure the user should read without opening the log, such as a held state lock).
 */
export class TaskFailed extends Error {
  constructor(
    message: string,
    readonly reason?: string,
  ) {
    super(message);
  }
}

export type Key = {
  id: number;
  type: string;
  login: string;
  password: string;
  passphrase: string;
  private_key: string;
};

export function decodeKey(box: SecretBox, row: KeyRow): Key {
  let secret: Record<string, unknown> = {};
  if (row.secret) {
    try {
      const parsed = JSON.parse(box.open(row.secret));
      if (parsed && typeof parsed === 'object') secret = parsed as Record<string, unknown>;
    } catch {
      throw new TaskFailed(`Cannot read key "${row.name}"`);
    }
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    id: row.id,
    type: row.type,
    login: str(secret.login),
    password: str(secret.password),
    passphrase: str(secret.passphrase),
    private_key: str(secret.private_key),
  };
}

/**
 * A key with its secret: decrypted, or read now from the server's environment variable or file it names. A source
 * that cannot be read fails the task with a line naming the key and the variable or file (never its content).
 */
export async function loadTaskKey(
  box: SecretBox,
  config: Pick<Config, 'keyEnvPrefix' | 'keyFilesDir'>,
  row: KeyRow,
): Promise<Key> {
  if (!row.source_storage_type) return decodeKey(box, row);
  try {
    return { id: row.id, type: row.type, ...(await keySecretOf({ box, config }, row)) };
  } catch (err) {
    if (err instanceof KeySourceError) throw new TaskFailed(err.message);
    throw err;
  }
}

/** An environment secret's value: the sealed text is either the bare value or a JSON document holding it. */
export function decodeSecretValue(box: SecretBox, row: KeyRow): string {
  if (!row.secret) return '';
  const text = box.open(row.secret);
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed === 'string') return parsed;
    if (parsed && typeof parsed === 'object') {
      for (const k of ['value', 'secret', 'password']) {
        const v = (parsed as Record<string, unknown>)[k];
        if (typeof v === 'string') return v;
      }
    }
  } catch {
    // plain text
  }
  return text;
}

export type JobDetails = {
  task: TaskRow;
  template: TemplateRow;
  project: ProjectRow;
  inventory: InventoryRow | null;
  repository: RepositoryRow | null;
  environment: EnvironmentRow | null;
  /** Environment JSON with the task's environment merged over it. */
  extraVars: Record<string, unknown>;
  /** Environment `env` map. */
  envVars: Record<string, string>;
  /** Environment secrets: `var` ones become extra vars, `env` ones process variables. */
  secretVars: Record<string, string>;
  secretEnv: Record<string, string>;
  /** Secret survey values. */
  surveySecrets: Record<string, unknown>;
  params: Record<string, unknown>;
  templateParams: Record<string, unknown>;
  incomingVersion: string | null;
  userName: string;
  /** The stored plan this task applies (Terraform, OpenTofu, Terragrunt), approved; absent: an ordinary run. */
  applyPlan?: StoredPlan | null;
  /**
   * The built-in state backend of a Terraform/OpenTofu/Terragrunt template that uses it: the state's path on the
   * server and the run's own credentials (valid while the task runs). Absent or null: the template's own backend.
   */
  stateBackend?: StateBackendAccess | null;
};

export type StateBackendAccess = { state: string; path: string; username: string; password: string };

/**
 * The context an executor works in: directories, environment, process spawning tied to the task's stop
 * button, and 0600 secret files in the per-task temp dir.
 */
export class Job {
  stopRequested: 'stop' | 'force' | null = null;
  current: TaskProcess | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private stopListeners: (() => void)[] = [];
  /** Aborted by the first stop request: ends helper commands run through `capture`. */
  private readonly stopSignal = new AbortController();
  /** The repository working copy (set by the checkout step). */
  repoDir = '';
  private openedSandbox: TaskSandbox | null = null;
  /** Paths outside the task's folder that every later command of a confined task sees (e.g. its repository). */
  private readonly shared: SandboxPath[] = [];

  constructor(
    readonly details: JobDetails,
    readonly sink: TaskLog,
    readonly processes: ProcessAdapter,
    readonly dirs: {
      task: string;
      tmp: string;
      home: string;
      reposCache: string;
      owner: string;
      /** Where the task's processes live (SIGNALBOX_TASK_ISOLATION); see isolation.ts. */
      isolation: IsolationSetting;
      /** What they can see (SIGNALBOX_TASK_SANDBOX); see confinement.ts. */
      confinement: Confinement;
      /** The file the task may write its outputs to (SIGNALBOX_OUTPUTS); null: outputs are not kept. */
      outputs?: string | null;
      /** The file the task may write its secret outputs to (SIGNALBOX_SECRET_OUTPUTS); null: not kept. */
      secretOutputs?: string | null;
    },
    readonly loadKey: (id: number) => Promise<Key | null>,
    readonly onStatus: (status: string) => Promise<void>,
    readonly waitDecision: () => Promise<'confirmed' | 'rejected'>,
    /**
     * Keeps the summary of the task's saved plan (Terraform, OpenTofu) with the plan file's facts, before it waits
     * for confirmation.
     */
    readonly savePlan: (summary: PlanSummary, facts: PlanFacts) => Promise<void> = async () => {},
    /** Reports what a drift check found (after the template's ignore rules). */
    readonly saveDrift: (report: DriftReport) => Promise<void> = async () => {},
  ) {}

  get task() {
    return this.details.task;
  }

  log(line: string) {
    this.sink.line(line);
  }

  /** Writes a file only the server user can read, in the per-task temp dir (removed after the run). */
  secretFile(name: string, content: string | Buffer, mode = 0o600): string {
    this.makeTmp();
    const path = join(this.dirs.tmp, name);
    writeFileSync(path, content, { mode });
    chmodSync(path, mode);
    handOver(this.dirs.confinement, path);
    return path;
  }

  /** The per-task temp dir, made on first use (the task user's when tasks run as one). */
  private makeTmp() {
    mkdirSync(this.dirs.tmp, { recursive: true, mode: 0o700 });
    handOver(this.dirs.confinement, this.dirs.tmp);
  }

  /** Makes a path the server made for the task the task user's (see handOver). */
  handOver(path: string, tree = false) {
    handOver(this.dirs.confinement, path, tree);
  }

  /** True when the task's commands run confined (bubblewrap): they see only the task's own files of the server. */
  get confined(): boolean {
    return this.dirs.confinement.mode === 'bwrap';
  }

  /** Lets every later command of a confined task see `path` (read-only unless `writable`). */
  share(path: string, writable = false) {
    if (!this.shared.some((p) => p.path === path && p.writable === writable))
      this.shared.push({ path, writable });
  }

  /** The server's PATH as the task's commands may use it: a confined task keeps the directories it can see. */
  toolPath(): string {
    const path = process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
    return visiblePath(this.dirs.confinement, path);
  }

  /** The process environment every tool of this task gets. */
  baseEnv(): Record<string, string> {
    const d = this.details;
    const env: Record<string, string> = {};
    for (const k of ['LANG', 'LC_ALL', 'TZ', 'USER', 'LOGNAME', 'SHELL']) {
      const v = process.env[k];
      if (v) env[k] = v;
    }
    env.PATH = this.toolPath();
    env.HOME = this.dirs.home;
    env.TMPDIR = this.dirs.tmp;
    env.SIGNALBOX_TASK_ID = String(d.task.id);
    env.SIGNALBOX_TASK_OWNER = this.dirs.owner;
    env.SEMAPHORE_TASK_TYPE = d.template.type;
    if (d.incomingVersion) env.SEMAPHORE_TASK_INCOMING_VERSION = d.incomingVersion;
    if (d.template.type === 'build' && d.task.version) env.SEMAPHORE_TASK_TARGET_VERSION = d.task.version;
    for (const [k, v] of Object.entries(d.envVars)) env[k] = v;
    for (const [k, v] of Object.entries(d.secretEnv)) env[k] = v;
    // Set last: an environment's variable of the same name does not move where the server reads the outputs.
    if (this.dirs.outputs) env[OUTPUTS_ENV] = this.dirs.outputs;
    if (this.dirs.secretOutputs) env[SECRET_OUTPUTS_ENV] = this.dirs.secretOutputs;
    return env;
  }

  /** The task's cgroup or session tracking under SIGNALBOX_TASK_ISOLATION (a forced cgroup mode without one fails). */
  private openIsolation(): TaskSandbox {
    try {
      return openTaskSandbox({
        owner: this.dirs.owner,
        taskId: this.task.id,
        taskDir: this.dirs.task,
        setting: this.dirs.isolation,
      });
    } catch (err) {
      if (err instanceof IsolationUnavailable) throw new TaskFailed(err.message);
      throw err;
    }
  }

  /**
   * Where every process of this task starts (opened on first use): its cgroup, or the session tracking of the
   * fallback, when the task is not confined; under bubblewrap, the PID namespace of each command's sandbox (and
   * a cgroup too only when the setting requires one: see confine.ts). A forced cgroup mode without cgroups, or a
   * required sandbox that cannot run, fails the task rather than running it unconfined.
   */
  get sandbox(): TaskSandbox {
    if (!this.openedSandbox) {
      const confinement = this.dirs.confinement;
      if (confinement.mode === 'refused') throw new TaskFailed(confinement.reason);
      let opened: TaskSandbox;
      if (confinement.mode === 'bwrap') {
        this.makeTmp();
        opened = confine(this.dirs.isolation === 'cgroup' ? this.openIsolation() : null, confinement, {
          dir: this.dirs.task,
          tmp: this.dirs.tmp,
          home: this.dirs.home,
          binds: () => this.shared,
        });
      } else opened = this.openIsolation();
      // A command that cannot be put in the sandbox (e.g. no cgroup can be created) fails the task, unstarted.
      this.openedSandbox = {
        mode: opened.mode,
        enter(command, args, opts) {
          try {
            return opened.enter(command, args, opts);
          } catch (err) {
            throw new TaskFailed(
              `Cannot start ${command} in the task's ${opened.mode}: ${(err as Error).message}`,
            );
          }
        },
        killAll: () => opened.killAll(),
      };
    }
    return this.openedSandbox;
  }

  onStop(listener: () => void) {
    this.stopListeners.push(listener);
  }

  requestStop(force: boolean) {
    const first = !this.stopRequested;
    if (force || !this.stopRequested) this.stopRequested = force ? 'force' : 'stop';
    if (first) {
      this.stopSignal.abort();
      for (const l of this.stopListeners) l();
    }
    // Everything of the task goes at once on a forced stop, and after the grace period otherwise (a command's
    // leftovers also go as soon as the command itself exits).
    const killAll = () => void this.openedSandbox?.killAll();
    if (force) killAll();
    const proc = this.current;
    if (!proc) return;
    if (force) {
      proc.kill('SIGKILL');
    } else {
      proc.kill('SIGTERM');
      this.killTimer ??= setTimeout(() => {
        proc.kill('SIGKILL');
        killAll();
      }, 3000);
    }
  }

  throwIfStopped() {
    if (this.stopRequested) throw new Stopped();
  }

  /** Runs a command, streaming its output into the task log; a stop request ends it and throws Stopped. */
  async exec(
    spec: Omit<ProcessSpec, 'env' | 'cwd' | 'sandbox'> & { cwd?: string; env?: Record<string, string> },
  ) {
    this.throwIfStopped();
    const full: ProcessSpec = {
      command: spec.command,
      args: spec.args,
      cwd: spec.cwd ?? (this.repoDir || this.dirs.task),
      env: spec.env ?? this.baseEnv(),
      sandbox: this.sandbox,
      binds: spec.binds,
    };
    const proc = this.processes.run(full, this.sink);
    this.current = proc;
    let result: ExitResult;
    try {
      result = await proc.wait();
    } finally {
      this.current = null;
      if (this.killTimer) clearTimeout(this.killTimer);
      this.killTimer = null;
    }
    this.throwIfStopped();
    return result;
  }

  /** exec, failing the task on a non-zero exit. */
  async execOk(spec: Parameters<Job['exec']>[0], what = spec.command) {
    const result = await this.exec(spec);
    if (result.code !== 0)
      throw new TaskFailed(
        `${what} failed with ${result.signal ? `signal ${result.signal}` : `exit code ${result.code}`}`,
      );
    return result;
  }

  /** A short helper command; a stop request ends it and throws Stopped. */
  async capture(
    spec: Omit<ProcessSpec, 'env' | 'cwd' | 'sandbox'> & { cwd?: string; env?: Record<string, string> },
    input?: string,
    opts: { maxBytes?: number } = {},
  ) {
    this.throwIfStopped();
    const result = await this.processes.capture(
      {
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd ?? (this.repoDir || this.dirs.task),
        env: spec.env ?? this.baseEnv(),
        sandbox: this.sandbox,
        binds: spec.binds,
      },
      input,
      { signal: this.stopSignal.signal, ...opts },
    );
    this.throwIfStopped();
    return result;
  }
}
