import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import {
  Alert,
  Autocomplete,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
  Typography,
} from '@mui/material';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useInfo } from '../../api/session';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { Spinner } from '../../components/states';
import { type RunnerInstall, type RunnerScope, registerCommands, useCreateRegistrationToken } from './api';

/**
 * Makes a one-time registration token as it opens and shows the commands that register and start a runner with
 * it. The token is shown only here: closing the dialog forgets it.
 */
export function RegisterRunnerDialog({ scope, onClose }: { scope: RunnerScope; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const info = useInfo().data;
  const create = useCreateRegistrationToken(scope);
  const { mutate } = create;
  useEffect(() => mutate(), [mutate]);
  const [name, setName] = useState('');
  const [tags, setTags] = useState<string[]>([]);
  const [pendingTag, setPendingTag] = useState('');
  const [install, setInstall] = useState<RunnerInstall>('checkout');

  const serverUrl = (info?.web_host || window.location.origin).replace(/\/$/, '');
  const token = create.data;
  const commands = token
    ? registerCommands(serverUrl, token.token, { projectId: scope.projectId, name, tags, install })
    : '';

  const copy = async () => {
    try {
      if (!navigator.clipboard || !commands) throw new Error('clipboard');
      await navigator.clipboard.writeText(commands);
      notify.success(t('runners.copied'));
    } catch {
      notify.error(new Error(t('runners.copyFailed')));
    }
  };

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="md" aria-labelledby="register-runner-title">
      <DialogTitle id="register-runner-title">{t('runners.registerTitle')}</DialogTitle>
      <DialogContent>
        <FormError error={create.error} />
        <Typography variant="body2" sx={{ mb: 2 }}>
          {scope.projectId === null ? t('runners.registerIntroGlobal') : t('runners.registerIntroProject')}
        </Typography>
        {create.isPending && <Spinner full={false} />}
        {token && (
          <>
            <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 2, pt: 1 }}>
              <TextField
                label={t('runners.registerName')}
                name="name"
                value={name}
                onChange={(e) => setName(e.target.value)}
                slotProps={{ htmlInput: { maxLength: 255 } }}
                sx={{ flex: 1 }}
              />
              <Autocomplete
                multiple
                freeSolo
                options={[]}
                value={tags}
                inputValue={pendingTag}
                onInputChange={(_e, value) => setPendingTag(value)}
                onChange={(_e, value) => setTags(value.map((v) => v.trim()).filter(Boolean))}
                renderValue={(value, getItemProps) =>
                  value.map((tag, index) => {
                    const { key, ...props } = getItemProps({ index });
                    return <Chip key={key} size="small" label={tag} {...props} />;
                  })
                }
                renderInput={(params) => (
                  <TextField
                    {...params}
                    label={t('runners.tags')}
                    name="tags"
                    helperText={t('runners.tagsHelp')}
                  />
                )}
                sx={{ flex: 1 }}
              />
            </Stack>
            <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, mb: 1, flexWrap: 'wrap' }}>
              <ToggleButtonGroup
                size="small"
                exclusive
                value={install}
                onChange={(_e, value: RunnerInstall | null) => value && setInstall(value)}
                aria-label={t('runners.install')}
              >
                <ToggleButton value="checkout">{t('runners.installCheckout')}</ToggleButton>
                <ToggleButton value="container">{t('runners.installContainer')}</ToggleButton>
              </ToggleButtonGroup>
              <Typography variant="caption" color="text.secondary" sx={{ flex: 1, minWidth: 200 }}>
                {install === 'checkout'
                  ? t('runners.installCheckoutHelp')
                  : t('runners.installContainerHelp')}
              </Typography>
            </Box>
            <Box
              component="pre"
              aria-label={t('runners.commands')}
              sx={{
                m: 0,
                p: 1.5,
                borderRadius: 1,
                bgcolor: 'action.hover',
                fontFamily: 'monospace',
                fontSize: 13,
                whiteSpace: 'pre-wrap',
                wordBreak: 'break-all',
              }}
            >
              {commands}
            </Box>
            <Box sx={{ display: 'flex', justifyContent: 'flex-end', mt: 1 }}>
              <Button startIcon={<ContentCopyIcon />} onClick={() => void copy()}>
                {t('runners.copy')}
              </Button>
            </Box>
            <Alert severity="warning" sx={{ mt: 1 }}>
              {t('runners.tokenOnce', { time: formatDateTime(token.expires_at) })}
            </Alert>
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
