import type {
  integrationExtractValueInput,
  integrationMatcherInput,
  KeyType,
  ProjectBackup,
  ProjectBackupInput,
  templateInput,
} from '@signalbox/contracts';
import type { z } from 'zod';
import type { PlannedWorkflow } from './plan-workflows';

// The plan of a restore: a checked backup whose references are names of objects of the plan.

export type PlannedKey = {
  name: string;
  type: KeyType;
  /** The secret's JSON text as the key store keeps it (empty fields when the backup has none); null for `none`. */
  secret: string | null;
};
export type PlannedTemplate = Omit<
  z.output<typeof templateInput>,
  | 'inventory_id'
  | 'repository_id'
  | 'environment_id'
  | 'vault_key_id'
  | 'vault_name'
  | 'vault_script'
  | 'view_id'
  | 'build_template_id'
  | 'survey_vars'
  | 'task_params'
  | 'check_new_commits'
  | 'cron_format'
  | 'check_new_commits_repository_id'
  | 'id'
  | 'project_id'
> & {
  inventory: string | null;
  repository: string | null;
  environment: string;
  vault_key: string | null;
  /** The vault's name and, for a script vault, its script (as the template API stores them). */
  vault_name: string | null;
  vault_script: string | null;
  view: string | null;
  build_template: string | null;
  /**
   * Survey variables and task params as the backup wrote them (checked; the API reads them with defaults); an
   * options source names its inventory, option list or key, and the restore gives it the new one's id.
   */
  survey_vars: string;
  task_params: string;
};
type MatcherValues = Omit<z.output<typeof integrationMatcherInput>, 'integration_id' | 'id'>;
type ExtractValueValues = Omit<z.output<typeof integrationExtractValueInput>, 'integration_id' | 'id'>;

type Backup = ProjectBackup;

/**
 * A checked backup, every reference a name of an object of the plan (or the project's own None key / Empty). Each
 * kind is the backup's own shape (as a backup is written) with only what the plan resolves differently.
 */
export type RestorePlan = {
  meta: ProjectBackupInput['meta'];
  keys: PlannedKey[];
  /** Every repository has a key: the project's None key when the backup names none. */
  repositories: Array<Omit<Backup['repositories'][number], 'ssh_key'> & { ssh_key: string }>;
  /** ssh_key null for a workspace inventory: it runs with the project's None key, as one saved through the API. */
  inventories: Backup['inventories'];
  environments: Array<
    Backup['environments'][number] & { secrets: Array<{ type: 'var' | 'env'; name: string; secret: string }> }
  >;
  views: Backup['views'];
  templates: PlannedTemplate[];
  schedules: Array<
    Omit<Backup['schedules'][number], 'checkable_repository' | 'task_params' | 'workflow'> & {
      /** The workflow it starts, by name (template then null); null: it starts its template's task. */
      workflow: string | null;
      repository: string | null;
      /** The stored text of its default task parameters, without the inventory (by name in `inventory`). */
      task_params: string;
      inventory: string | null;
    }
  >;
  integrations: Array<
    Omit<Backup['integrations'][number], 'matchers' | 'extract_values' | 'workflow'> & {
      /** The workflow it starts, by name (template then null); null: it starts its template's task. */
      workflow: string | null;
      /** The inventory of its default task parameters, by name (taken out of `task_params`). */
      inventory: string | null;
      matchers: MatcherValues[];
      extract_values: ExtractValueValues[];
    }
  >;
  integration_aliases: string[];
  option_lists: Backup['option_lists'];
  terraform_states: Backup['terraform_states'];
  workflows: PlannedWorkflow[];
};
