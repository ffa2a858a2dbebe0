/**
 * Where a task's processes live, so that all of them end with the task — grandchildren that started a new
 * session and cleared their environment included. `cgroup`: every command starts in its own cgroup v2 under
 * <server's cgroup>/signalbox-<instance>/task-<id>/, and cgroup.kill ends everything in it. `session`: the
 * fallback where there is no writable cgroup v2 (see SessionSandbox).
 */
export type IsolationMode = 'cgroup' | 'session';
export type IsolationSetting = 'auto' | IsolationMode;

/** One command started in a task's sandbox. */
export interface SandboxUnit {
  /** What to spawn instead of the command itself (a wrapper that enters the cgroup, or the command). */
  readonly command: string;
  readonly args: string[];
  /** Tells the sandbox the pid of the spawned process. */
  started(pid: number): void;
  /** Kills whatever the command left behind and forgets it; call once its main process has exited. */
  release(): Promise<void>;
  /** Signals the command's processes where a plain signal to its process group would not reach them. */
  signal?(sig: NodeJS.Signals): void;
}

/** What one command needs beyond the task's own: its directory and paths it alone may see (confinement.ts). */
export type EnterOptions = { cwd?: string; binds?: { path: string; writable: boolean }[] };

export interface TaskSandbox {
  /** `namespace`: confined commands only, held by the PID namespace of their sandbox (confine.ts). */
  readonly mode: IsolationMode | 'namespace';
  enter(command: string, args: string[], opts?: EnterOptions): SandboxUnit;
  /** Kills every process of the task (a stop request). */
  killAll(): Promise<void>;
}
