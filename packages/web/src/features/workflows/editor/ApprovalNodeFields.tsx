import {
  Checkbox,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormHelperText,
  FormLabel,
  MenuItem,
  Stack,
  TextField,
} from '@mui/material';
import {
  projectRoles,
  type WorkflowApprovalNode,
  workflowApprovalTimeoutActions,
} from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

const intOrNull = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : null);

/**
 * An approval node's settings: who may approve (roles and named members), how many approvals it needs, whether the
 * person who started the run may approve, the message approvers see, and a timeout with what it does then.
 */
export function ApprovalNodeFields({
  node,
  onChange,
  members,
  fieldError,
}: {
  node: WorkflowApprovalNode;
  onChange: (patch: Partial<WorkflowApprovalNode>) => void;
  members: { user_id: number; name: string }[];
  fieldError: (field: string) => string | undefined;
}) {
  const { t } = useTranslation();
  const err = (field: string) => {
    const text = fieldError(field);
    return text ? { error: true, helperText: text } : {};
  };
  const rolesError = fieldError('roles');
  const toggleRole = (role: (typeof projectRoles)[number], on: boolean) =>
    onChange({ roles: on ? [...node.roles, role] : node.roles.filter((r) => r !== role) });
  return (
    <Stack spacing={2}>
      <FormControl component="fieldset" error={!!rolesError}>
        <FormLabel component="legend">{t('wf.approval.roles')}</FormLabel>
        <FormGroup row>
          {projectRoles.map((role) => (
            <FormControlLabel
              key={role}
              label={t(`roles.${role}`)}
              control={
                <Checkbox
                  checked={node.roles.includes(role)}
                  onChange={(e) => toggleRole(role, e.target.checked)}
                />
              }
            />
          ))}
        </FormGroup>
        {rolesError && <FormHelperText>{rolesError}</FormHelperText>}
      </FormControl>
      <TextField
        select
        size="small"
        label={t('wf.approval.users')}
        value={node.user_ids.map(String)}
        onChange={(e) => {
          const picked = e.target.value as unknown as string[];
          onChange({ user_ids: picked.map(Number) });
        }}
        slotProps={{ select: { multiple: true } }}
        {...err('user_ids')}
      >
        {members.map((m) => (
          <MenuItem key={m.user_id} value={String(m.user_id)}>
            {m.name}
          </MenuItem>
        ))}
      </TextField>
      <TextField
        size="small"
        type="number"
        label={t('wf.approval.required')}
        value={node.required}
        onChange={(e) => onChange({ required: intOrNull(e.target.value) ?? 1 })}
        slotProps={{ htmlInput: { min: 1, max: 20 } }}
        {...err('required')}
      />
      <FormControlLabel
        label={t('wf.approval.selfApproval')}
        control={
          <Checkbox
            checked={node.allow_self_approval}
            onChange={(e) => onChange({ allow_self_approval: e.target.checked })}
          />
        }
      />
      <TextField
        size="small"
        multiline
        minRows={2}
        label={t('wf.approval.message')}
        value={node.message}
        onChange={(e) => onChange({ message: e.target.value })}
        slotProps={{ htmlInput: { maxLength: 2000 } }}
        {...err('message')}
      />
      <TextField
        size="small"
        type="number"
        label={t('wf.approval.timeout')}
        value={node.timeout_seconds ?? ''}
        onChange={(e) => onChange({ timeout_seconds: intOrNull(e.target.value) })}
        slotProps={{ htmlInput: { min: 1 } }}
        {...(fieldError('timeout_seconds')
          ? err('timeout_seconds')
          : { helperText: t('wf.approval.timeoutHelp') })}
      />
      <TextField
        select
        size="small"
        label={t('wf.approval.onTimeout')}
        value={node.on_timeout}
        onChange={(e) => onChange({ on_timeout: e.target.value as WorkflowApprovalNode['on_timeout'] })}
        disabled={node.timeout_seconds === null}
        {...err('on_timeout')}
      >
        {workflowApprovalTimeoutActions.map((a) => (
          <MenuItem key={a} value={a}>
            {t(`wf.approval.timeoutActions.${a}`)}
          </MenuItem>
        ))}
      </TextField>
    </Stack>
  );
}
