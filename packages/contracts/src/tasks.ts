/** Task states and their labels. */
export const taskStatuses = [
  'waiting',
  'waiting_approval',
  'starting',
  'waiting_confirmation',
  'confirmed',
  'rejected',
  'running',
  'stopping',
  'stopped',
  'success',
  'error',
] as const;
export type TaskStatus = (typeof taskStatuses)[number];

/**
 * A task ends `success`, `error` or `stopped`, or `rejected` when a person declined to approve its run (a plan a
 * person rejects passes through `rejected` on its way to `error`).
 */
export const finishedStatuses: readonly TaskStatus[] = ['success', 'error', 'stopped', 'rejected'];
export const isFinished = (s: string) => (finishedStatuses as readonly string[]).includes(s);

/** States in which the Stop button is shown (it reads Force stop while stopping). */
export const stoppableStatuses: readonly TaskStatus[] = [
  'running',
  'stopping',
  'waiting',
  'starting',
  'waiting_confirmation',
  'confirmed',
  'waiting_approval',
];

/**
 * How a task was started: from the console (`ui`), with an API token (`api`), by a schedule, an integration, a
 * build's autorun, by an AI agent through the MCP endpoint (`mcp`, whose runs may wait for a person's approval), or
 * by a template node of a workflow run (`workflow`).
 */
export const taskSources = ['ui', 'api', 'schedule', 'integration', 'autorun', 'mcp', 'workflow'] as const;
export type TaskSource = (typeof taskSources)[number];

export const apps = [
  'ansible',
  'terraform',
  'tofu',
  'bash',
  'pulumi',
  'terragrunt',
  'powershell',
  'python',
] as const;
export type App = (typeof apps)[number];
export const templateTypes = ['', 'build', 'deploy'] as const;
export type TemplateType = (typeof templateTypes)[number];
