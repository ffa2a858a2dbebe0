import {
  BUILD_VERSION_REQUIRED,
  isTemplateCliArgs,
  messages,
  type Template,
  templateArgsMessage,
} from '@signalbox/contracts';

export type RunValues = {
  message: string;
  build_task_id: number;
  survey: Record<string, string>;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
  limit: string;
  tags: string;
  skip_tags: string;
  inventory_id: number;
  git_branch: string;
  arguments: string;
};

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Checks the new-task form and builds the POST tasks body. Errors map a field to its English
 * message; a required survey variable answers 'required' so the form names it by its title.
 */
export function validateRun(template: Template, v: RunValues) {
  const errors: Record<string, string> = {};
  const environment: Record<string, unknown> = {};
  const secret: Record<string, unknown> = {};
  if (template.type === 'deploy' && !v.build_task_id) errors.build_task_id = BUILD_VERSION_REQUIRED;
  for (const sv of template.survey_vars) {
    const value = (v.survey[sv.name] ?? '').trim();
    const key = `survey.${sv.name}`;
    if (value === '') {
      if (sv.required) errors[key] = 'required';
      continue;
    }
    if (sv.type === 'int') {
      if (!/^\d+$/.test(value)) errors[key] = messages.mustBeInteger;
      else environment[sv.name] = Number(value);
    } else if (sv.type === 'secret') secret[sv.name] = value;
    else environment[sv.name] = value;
  }
  let args: string | undefined;
  if (template.allow_override_args_in_task) {
    const text = v.arguments.trim();
    if (text !== '' && !isTemplateCliArgs(text)) errors.arguments = templateArgsMessage;
    else args = text || undefined;
  }
  if (Object.keys(errors).length > 0) return { errors, body: null };
  const params = template.task_params ?? {};
  const body: Record<string, unknown> = {
    template_id: template.id,
    message: v.message.trim(),
    debug: v.debug,
    dry_run: v.dry_run,
    diff: v.diff,
    environment: JSON.stringify(environment),
  };
  if (Object.keys(secret).length > 0) body.secret = JSON.stringify(secret);
  if (template.type === 'deploy') body.build_task_id = v.build_task_id;
  if (args !== undefined) body.arguments = args;
  if (params.allow_override_limit) body.limit = list(v.limit);
  if (params.allow_override_tags) body.tags = list(v.tags);
  if (params.allow_override_skip_tags) body.skip_tags = list(v.skip_tags);
  if (params.allow_override_inventory && v.inventory_id) body.inventory_id = v.inventory_id;
  if (template.allow_override_branch_in_task && v.git_branch.trim()) body.git_branch = v.git_branch.trim();
  return { errors, body };
}
