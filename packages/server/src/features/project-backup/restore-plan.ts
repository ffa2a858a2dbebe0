import type {
  integrationExtractValueInput,
  integrationMatcherInput,
  KeyType,
  ProjectBackupInput,
  templateInput,
} from '@signalbox/contracts';
import type { z } from 'zod';

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
  /** Survey variables and task params as the backup wrote them (checked; the API reads them with defaults). */
  survey_vars: string;
  task_params: string;
};
type MatcherValues = Omit<z.output<typeof integrationMatcherInput>, 'integration_id' | 'id'>;
type ExtractValueValues = Omit<z.output<typeof integrationExtractValueInput>, 'integration_id' | 'id'>;

/** A checked backup, every reference a name of an object of the plan (or the project's own None key / Empty). */
export type RestorePlan = {
  meta: ProjectBackupInput['meta'];
  keys: PlannedKey[];
  repositories: Array<{ name: string; git_url: string; git_branch: string; ssh_key: string }>;
  inventories: Array<{
    name: string;
    type: string;
    inventory: string;
    /** Null for a workspace inventory: it runs with the project's None key, as one saved through the API. */
    ssh_key: string | null;
    become_key: string | null;
    repository: string | null;
    runner_tag: string | null;
  }>;
  environments: Array<{
    name: string;
    json: string;
    env: string;
    secrets: Array<{ type: 'var' | 'env'; name: string; secret: string }>;
  }>;
  views: Array<{ title: string; position: number }>;
  templates: PlannedTemplate[];
  schedules: Array<{
    name: string;
    template: string;
    type: '' | 'run_at';
    cron_format: string;
    run_at: string | null;
    delete_after_run: boolean;
    active: boolean;
    repository: string | null;
    /** The stored text of its default task parameters, without the inventory (by name in `inventory`). */
    task_params: string;
    inventory: string | null;
  }>;
  integrations: Array<{
    name: string;
    template: string;
    auth_method: string;
    auth_header: string;
    auth_secret: string | null;
    searchable: boolean;
    /** The stored default task parameters, the inventory (by name) taken out. */
    task_params: Record<string, unknown>;
    inventory: string | null;
    aliases: string[];
    matchers: MatcherValues[];
    extract_values: ExtractValueValues[];
  }>;
  integration_aliases: string[];
};
