import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DeleteIcon from '@mui/icons-material/Delete';
import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  InputAdornment,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { type ApiToken, tokenScopes } from '@signalbox/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useProjects, useUser } from '../../api/session';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { formatDateTime } from '../../components/format';
import { usePhone } from '../../components/lists';
import { useNotify } from '../../components/snackbar';
import { ApiTokenForm } from './ApiTokenForm';
import { useApiTokens, useDeleteApiToken } from './api';

/**
 * The signed-in user's API tokens: list with what each may reach and its expiry (a token past it is marked Expired
 * until deleted), create (ApiTokenForm; the token shown once with a copy button) and delete. Tokens are sent as
 * `Authorization: Bearer <token>`.
 */
export function ApiTokensDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const tokens = useApiTokens(open);
  const user = useUser().data;
  const projectNames = new Map((useProjects().data ?? []).map((p) => [p.id, p.name]));
  const del = useConfirmedDelete(
    useDeleteApiToken(),
    (token: ApiToken) => token.id,
    (token) => t('tokens.deleted', { name: token.name || t('tokens.untitled') }),
  );
  const [shown, setShown] = useState<string | null>(null);
  // Phones show name (what the token reaches under it), expiry and actions, so the delete button stays in view.
  const phone = usePhone();

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      setShown(null);
      del.close();
    }
  }, [open]);

  const copy = async () => {
    try {
      if (!navigator.clipboard || !shown) throw new Error('clipboard');
      await navigator.clipboard.writeText(shown);
      notify.success(t('tokens.copied'));
    } catch {
      notify.error(new Error(t('tokens.copyFailed')));
    }
  };

  const list = tokens.data ?? [];
  return (
    <Dialog open={open} onClose={onClose} fullWidth maxWidth="md" aria-labelledby="api-tokens-title">
      <DialogTitle id="api-tokens-title">{t('tokens.title')}</DialogTitle>
      <DialogContent>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 2 }}>
          {t('tokens.intro')}
        </Typography>
        {shown && (
          <Alert
            severity="warning"
            sx={{ mb: 2, '& .MuiAlert-message': { flex: 1, minWidth: 0 } }}
            role="status"
          >
            <Typography variant="body2" sx={{ mb: 1 }}>
              {t('tokens.showOnce')}
            </Typography>
            <TextField
              value={shown}
              fullWidth
              size="small"
              label={t('tokens.newToken')}
              slotProps={{
                htmlInput: { readOnly: true, spellCheck: false, sx: { fontFamily: 'monospace' } },
                input: {
                  endAdornment: (
                    <InputAdornment position="end">
                      <Tooltip title={t('tokens.copy')}>
                        <IconButton aria-label={t('tokens.copy')} edge="end" onClick={() => void copy()}>
                          <ContentCopyIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                    </InputAdornment>
                  ),
                },
              }}
              onFocus={(e) => e.target.select()}
            />
          </Alert>
        )}
        <ApiTokenForm open={open} user={user} onCreated={setShown} />
        <Box sx={{ mt: 2, overflowX: 'auto' }}>
          {tokens.isSuccess && list.length === 0 ? (
            <Typography variant="body2" color="text.secondary" sx={{ py: 2 }}>
              {t('tokens.empty')}
            </Typography>
          ) : (
            <Table size="small" aria-label={t('tokens.title')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('fields.name')}</TableCell>
                  {!phone && <TableCell>{t('tokens.access')}</TableCell>}
                  {!phone && <TableCell>{t('tokens.created')}</TableCell>}
                  <TableCell>{t('tokens.expires')}</TableCell>
                  <TableCell align="right">{t('common.actions')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((token) => {
                  const label = token.name || t('tokens.untitled');
                  return (
                    <TableRow
                      key={token.id}
                      sx={token.expired ? { '& td': { color: 'text.secondary' } } : {}}
                    >
                      <TableCell>
                        {label}
                        {phone && (
                          <Box sx={{ mt: 0.5 }}>
                            <TokenAccess token={token} projectNames={projectNames} />
                          </Box>
                        )}
                      </TableCell>
                      {!phone && (
                        <TableCell>
                          <TokenAccess token={token} projectNames={projectNames} />
                        </TableCell>
                      )}
                      {!phone && <TableCell>{formatDateTime(token.created)}</TableCell>}
                      <TableCell>
                        {token.expires ? formatDateTime(token.expires) : t('tokens.never')}
                        {token.expired && (
                          <Tooltip title={t('tokens.expiredHint')}>
                            <Chip
                              label={t('tokens.expired')}
                              size="small"
                              color="warning"
                              variant="outlined"
                              sx={{ ml: 1 }}
                            />
                          </Tooltip>
                        )}
                      </TableCell>
                      <TableCell align="right">
                        <Tooltip title={t('tokens.deleteNamed', { name: label })}>
                          <IconButton
                            aria-label={t('tokens.deleteNamed', { name: label })}
                            size="small"
                            onClick={() => del.ask(token)}
                          >
                            <DeleteIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      </TableCell>
                    </TableRow>
                  );
                })}
              </TableBody>
            </Table>
          )}
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
      <ConfirmDialog
        title={t('tokens.deleteTitle')}
        text={t('tokens.deleteConfirm', { name: del.target ? del.target.name || t('tokens.untitled') : '' })}
        {...del.dialogProps}
      />
    </Dialog>
  );
}

/** What a token may do and where: "Full rights", or its scopes and projects as chips. */
function TokenAccess({ token, projectNames }: { token: ApiToken; projectNames: Map<number, string> }) {
  const { t } = useTranslation();
  const everyScope = tokenScopes.every((scope) => token.scopes.includes(scope));
  if (everyScope && token.project_ids === null) return <>{t('tokens.fullRights')}</>;
  return (
    <Stack direction="row" spacing={0.5} useFlexGap sx={{ flexWrap: 'wrap' }}>
      {token.scopes.map((scope) => (
        <Chip key={scope} size="small" label={t(`tokens.scope.${scope}`)} />
      ))}
      {token.project_ids === null ? (
        <Chip size="small" variant="outlined" label={t('tokens.allProjects')} />
      ) : (
        token.project_ids.map((id) => (
          <Chip key={id} size="small" variant="outlined" label={projectNames.get(id) ?? `#${id}`} />
        ))
      )}
    </Stack>
  );
}
