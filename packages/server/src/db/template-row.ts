import type { Insertable } from 'kysely';
import type { TemplateTable } from './tables';

/** The columns a template row leaves at their defaults: nothing attached, no options, no survey, no task params. */
export const templateRowDefaults = {
  description: '',
  type: '',
  inventory_id: null,
  repository_id: null,
  environment_id: null,
  vault_key_id: null,
  view_id: null,
  build_template_id: null,
  start_version: null,
  autorun: 0,
  suppress_success_alerts: 0,
  arguments: null,
  allow_override_args_in_task: 0,
  allow_override_branch_in_task: 0,
  allow_parallel_tasks: 0,
  git_branch: null,
  survey_vars: '[]',
  task_params: '{}',
} satisfies Partial<Insertable<TemplateTable>>;
