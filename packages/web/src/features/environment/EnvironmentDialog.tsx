import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import {
  Alert,
  Box,
  Button,
  Checkbox,
  FormControlLabel,
  IconButton,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { type Environment, type EnvironmentSecretType, environmentInput } from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useResourceSave } from '../../api/resources';
import { CodeEditor } from '../../components/CodeEditor';
import { FormDialog } from '../../components/FormDialog';
import { useSaveAndClose } from '../../components/forms';
import { translateResourceMessage } from '../../components/messages';
import { StoredSecretField } from '../../components/StoredSecretField';
import { useResourceNotify } from '../../components/ui';

const HOST_KEY = 'ANSIBLE_HOST_KEY_CHECKING';

type SecretRow = {
  id?: number;
  type: EnvironmentSecretType;
  name: string;
  secret: string;
  deleted?: boolean;
  /** Replace was pressed on a stored secret: its input no longer says the stored value stays. */
  replacing?: boolean;
};

const pretty = (text: string) => {
  try {
    return JSON.stringify(JSON.parse(text || '{}'), null, 2);
  } catch {
    return text;
  }
};

const parseObject = (text: string): Record<string, unknown> | null => {
  try {
    const value: unknown = JSON.parse(text.trim() || '{}');
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
};

/** Name, extra variables (JSON), environment variables (JSON) with the host-key toggle, and secrets. */
export function EnvironmentDialog({
  projectId,
  item,
  readOnly,
  onClose,
}: {
  projectId: number;
  item: Environment | null;
  readOnly?: boolean;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const save = useResourceSave<Record<string, unknown> & { id?: number | null }>(projectId, 'environment');
  const [name, setName] = useState(item?.name ?? '');
  const [nameError, setNameError] = useState('');
  const [json, setJson] = useState(pretty(item?.json ?? '{}'));
  const [env, setEnv] = useState(pretty(item?.env ?? '{}'));
  const [secrets, setSecrets] = useState<SecretRow[]>(
    (item?.secrets ?? []).map((s) => ({ id: s.id, type: s.type, name: s.name, secret: '' })),
  );
  const envObject = parseObject(env);
  const hostKeyOff = envObject?.[HOST_KEY] === 'False';

  const toggleHostKey = (on: boolean) => {
    const current = parseObject(env);
    if (!current) {
      notify.error(t('environment.envVarsInvalid'));
      return;
    }
    if (on) current[HOST_KEY] = 'False';
    else delete current[HOST_KEY];
    setEnv(JSON.stringify(current, null, 2));
  };

  const saveAndClose = useSaveAndClose(save, onClose);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const secretOps = secrets.flatMap((s): Record<string, unknown>[] => {
      if (s.id && s.deleted) return [{ id: s.id, type: s.type, name: s.name, operation: 'delete' as const }];
      if (s.deleted) return [];
      if (!s.id) return [{ type: s.type, name: s.name, secret: s.secret, operation: 'create' as const }];
      const original = item?.secrets.find((o) => o.id === s.id);
      if (s.secret || original?.name !== s.name || original?.type !== s.type)
        return [{ id: s.id, type: s.type, name: s.name, secret: s.secret, operation: 'update' as const }];
      return [];
    });
    const parsed = environmentInput.safeParse({ name, json, env, secrets: secretOps });
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      const message = translateResourceMessage(issue?.message ?? '', t, String(issue?.path[0] ?? 'name'));
      if (issue?.path[0] === 'name') setNameError(message);
      else notify.error(message); // Invalid JSON: a red snackbar.
      return;
    }
    setNameError('');
    await saveAndClose(
      { ...parsed.data, id: item?.id ?? null },
      t(item ? 'environment.saved' : 'environment.created', { name: parsed.data.name }),
    );
  };

  const updateSecret = (index: number, patch: Partial<SecretRow>) =>
    setSecrets((rows) => rows.map((r, i) => (i === index ? { ...r, ...patch } : r)));

  return (
    <FormDialog
      open
      formId="environment-form"
      title={item ? t('environment.edit') : t('environment.new')}
      error={save.error}
      pending={save.isPending || readOnly}
      onSubmit={(e) => void submit(e)}
      onClose={onClose}
      maxWidth="md"
    >
      <Stack spacing={2}>
        {readOnly && <Alert severity="info">{t('res.readOnly')}</Alert>}
        <TextField
          label={t('res.name')}
          required
          autoFocus
          disabled={readOnly}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={!!nameError}
          helperText={nameError || undefined}
          name="name"
        />
        <CodeEditor
          label={t('environment.extraVars')}
          mode="json"
          value={json}
          onChange={setJson}
          readOnly={readOnly}
          minHeight={120}
          testId="extra-vars-editor"
        />
        <CodeEditor
          label={t('environment.envVars')}
          mode="json"
          value={env}
          onChange={setEnv}
          readOnly={readOnly}
          minHeight={100}
          testId="env-vars-editor"
        />
        <FormControlLabel
          disabled={readOnly}
          label={t('environment.hostKeyToggle')}
          control={<Checkbox checked={hostKeyOff} onChange={(e) => toggleHostKey(e.target.checked)} />}
        />
        <Box>
          <Typography variant="subtitle2" component="h3" sx={{ mb: 1 }}>
            {t('environment.secrets')}
          </Typography>
          <Stack spacing={1.5}>
            {secrets.map((s, index) =>
              s.deleted ? null : (
                <Box
                  key={s.id ?? `new-${index}`}
                  // Fields line up at their top: a stored secret's hint below its input must not shift the row.
                  sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'flex-start' }}
                  data-secret-row
                >
                  <TextField
                    select
                    size="small"
                    label={t('res.type')}
                    value={s.type}
                    disabled={readOnly}
                    onChange={(e) => updateSecret(index, { type: e.target.value as EnvironmentSecretType })}
                    // As wide as the type's label in any language ("Environment variable", "Дополнительная
                    // переменная"…), never cut; at least as wide as the shorter ones, so rows line up.
                    sx={{ flex: '0 0 auto', minWidth: 210, maxWidth: '100%' }}
                  >
                    <MenuItem value="var">{t('environment.secretVar')}</MenuItem>
                    <MenuItem value="env">{t('environment.secretEnv')}</MenuItem>
                  </TextField>
                  <TextField
                    size="small"
                    label={t('environment.secretName')}
                    value={s.name}
                    disabled={readOnly}
                    onChange={(e) => updateSecret(index, { name: e.target.value })}
                    sx={{ flex: '1 1 140px' }}
                  />
                  <StoredSecretField
                    stored={!!s.id && !s.replacing && !s.secret}
                    onReplace={() => updateSecret(index, { secret: '', replacing: true })}
                    size="small"
                    type="password"
                    autoComplete="new-password"
                    label={t('environment.secretValue')}
                    value={s.secret}
                    disabled={readOnly}
                    onChange={(e) => updateSecret(index, { secret: e.target.value })}
                    sx={{ flex: '1 1 220px' }}
                  />
                  <IconButton
                    aria-label={t('environment.removeSecret', { name: s.name })}
                    disabled={readOnly}
                    sx={{ mt: 0.25 }}
                    onClick={() =>
                      s.id
                        ? updateSecret(index, { deleted: true })
                        : setSecrets((rows) => rows.filter((_, i) => i !== index))
                    }
                  >
                    <DeleteIcon fontSize="small" />
                  </IconButton>
                </Box>
              ),
            )}
          </Stack>
          <Button
            size="small"
            startIcon={<AddIcon />}
            disabled={readOnly}
            sx={{ mt: 1 }}
            onClick={() => setSecrets((rows) => [...rows, { type: 'var', name: '', secret: '' }])}
          >
            {t('environment.addSecret')}
          </Button>
        </Box>
      </Stack>
    </FormDialog>
  );
}
