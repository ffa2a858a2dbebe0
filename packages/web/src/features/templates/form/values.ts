import { apps, type Template, type templateInput } from '@signalbox/contracts';
import type { FieldErrors, UseFormReturn } from 'react-hook-form';
import type { z } from 'zod';

export type Values = z.input<typeof templateInput>;

/** What every section of the template form is given: the form, its errors, and the server's answer to a save. */
export type SectionProps = {
  form: UseFormReturn<Values>;
  errors: FieldErrors<Values>;
  serverError: unknown;
};

/** The form's starting values: a template being edited or copied, else a new one of `app`. */
export function defaults(source: Template | undefined, app: string, copyName?: string): Values {
  return {
    name: copyName ?? source?.name ?? '',
    description: source?.description ?? '',
    type: source?.type ?? '',
    app: (source?.app ?? (apps.includes(app as never) ? app : 'ansible')) as Values['app'],
    playbook: source?.playbook ?? '',
    inventory_id: source?.inventory_id ?? null,
    repository_id: source?.repository_id ?? null,
    environment_id: source?.environment_id ?? null,
    // The vault is edited in its list form (name, key or script); vault_key_id is its short form, left out.
    vault_key_id: null,
    vaults: (source?.vaults ?? []).map((v) => ({ ...v })),
    view_id: source?.view_id ?? null,
    build_template_id: source?.build_template_id ?? null,
    start_version: source?.start_version ?? '',
    autorun: source?.autorun ?? false,
    suppress_success_alerts: source?.suppress_success_alerts ?? false,
    arguments: source?.arguments ?? '',
    allow_override_args_in_task: source?.allow_override_args_in_task ?? false,
    allow_override_branch_in_task: source?.allow_override_branch_in_task ?? false,
    allow_parallel_tasks: source?.allow_parallel_tasks ?? false,
    git_branch: source?.git_branch ?? '',
    survey_vars: source?.survey_vars ?? [],
    task_params: source?.task_params ?? {},
    check_new_commits: source?.check_new_commits ?? false,
    cron_format: source?.check_new_commits ? source.cron_format : '* * * * *',
    check_new_commits_repository_id: source?.check_new_commits_repository_id ?? null,
    runner_tag: source?.runner_tag ?? '',
  };
}
