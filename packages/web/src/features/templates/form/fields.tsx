import { Checkbox, FormControlLabel } from '@mui/material';
import { Controller } from 'react-hook-form';
import { playbookHint, usePickLabels } from '../../../components/pick-labels';
import { idOptions, SelectField } from '../../../components/SelectField';
import type { SectionProps } from './values';

type IdField =
  | 'inventory_id'
  | 'repository_id'
  | 'environment_id'
  | 'vault_key_id'
  | 'view_id'
  | 'build_template_id'
  | 'check_new_commits_repository_id';

type FlagField =
  | 'autorun'
  | 'suppress_success_alerts'
  | 'allow_override_args_in_task'
  | 'allow_override_branch_in_task'
  | 'allow_parallel_tasks'
  | 'check_new_commits';

/** A select of one referenced object (inventory, repository, …), stored as its id or null. */
export function IdSelect({
  form,
  serverError,
  name,
  label,
  options,
  required,
  none,
  helperText,
}: SectionProps & {
  name: IdField;
  label: string;
  options: { id: number; name: string; playbook?: string | null }[];
  required?: boolean;
  none?: boolean;
  helperText?: string;
}) {
  const labelled = usePickLabels();
  return (
    <SelectField
      control={form.control}
      name={name}
      label={label}
      options={idOptions(labelled(options, playbookHint))}
      none={none}
      required={required}
      fullWidth
      helperText={helperText}
      serverError={serverError}
    />
  );
}

/** A checkbox of one of the template's flags. */
export function FlagCheckbox({
  form,
  name,
  label,
}: Pick<SectionProps, 'form'> & { name: FlagField; label: string }) {
  return (
    <Controller
      control={form.control}
      name={name}
      render={({ field: f }) => (
        <FormControlLabel
          label={label}
          control={
            <Checkbox checked={!!f.value} onChange={(e) => f.onChange(e.target.checked)} name={f.name} />
          }
        />
      )}
    />
  );
}
