/** Task states and their labels. */
export const taskStatuses = [
  'waiting',
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

export const finishedStatuses: readonly TaskStatus[] = ['success', 'error', 'stopped'];
export const isFinished = (s: string) => (finishedStatuses as readonly string[]).includes(s);

/** States in which the Stop button is shown (it reads Force stop while stopping). */
export const stoppableStatuses: readonly TaskStatus[] = [
  'running',
  'stopping',
  'waiting',
  'starting',
  'waiting_confirmation',
  'confirmed',
];

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
