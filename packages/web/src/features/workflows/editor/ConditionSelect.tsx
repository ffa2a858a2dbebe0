import { MenuItem, TextField } from '@mui/material';
import { type WorkflowEdgeCondition, workflowEdgeConditions } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/** An edge's condition: on success, on failure, always. */
export function ConditionSelect({
  label,
  value,
  onChange,
  error,
  id,
}: {
  label: string;
  value: WorkflowEdgeCondition;
  onChange: (value: WorkflowEdgeCondition) => void;
  error?: string;
  id?: string;
}) {
  const { t } = useTranslation();
  return (
    <TextField
      select
      size="small"
      label={label}
      value={value}
      onChange={(e) => onChange(e.target.value as WorkflowEdgeCondition)}
      sx={{ minWidth: 140 }}
      id={id}
      {...(error ? { error: true, helperText: error } : {})}
    >
      {workflowEdgeConditions.map((c) => (
        <MenuItem key={c} value={c}>
          {t(`wf.condition.${c}`)}
        </MenuItem>
      ))}
    </TextField>
  );
}
