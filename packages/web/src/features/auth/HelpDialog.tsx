import { Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Typography } from '@mui/material';
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { examplePassword } from './example-password';

const Command = ({ children }: { children: string }) => (
  <Box
    component="pre"
    sx={{
      m: 0,
      mb: 2,
      p: 1.5,
      borderRadius: 1,
      bgcolor: 'action.hover',
      fontSize: 13,
      overflowX: 'auto',
      // Lines break between words; a token (the example password, a path) breaks only if wider than the box.
      whiteSpace: 'pre-wrap',
      overflowWrap: 'break-word',
    }}
  >
    <code>{children}</code>
  </Box>
);

/**
 * "Can't sign in": the server-side commands that list users, reset a password or add an admin, and with `totp`
 * (the server offers two-factor sign-in) turn off a user's.
 */
export function HelpDialog({ open, onClose, totp }: { open: boolean; onClose: () => void; totp?: boolean }) {
  const { t } = useTranslation();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a fresh example each time the dialog opens
  const password = useMemo(() => examplePassword(), [open]);
  return (
    <Dialog open={open} onClose={onClose} maxWidth="sm" fullWidth>
      <DialogTitle>{t('auth.helpTitle')}</DialogTitle>
      <DialogContent>
        <Typography sx={{ mb: 2 }}>{t('auth.helpIntro')}</Typography>
        <Typography variant="subtitle2">{t('auth.helpList')}</Typography>
        <Command>{'npx signalbox user list'}</Command>
        <Typography variant="subtitle2">{t('auth.helpChange')}</Typography>
        <Command>{`npx signalbox user change-by-login --login <login> --password ${password}`}</Command>
        <Typography variant="subtitle2">{t('auth.helpAdd')}</Typography>
        <Command>
          {`npx signalbox user add --admin --login <login> --name "<name>" --email <email> --password ${password}`}
        </Command>
        {totp && (
          <>
            <Typography variant="subtitle2">{t('totp.helpReset')}</Typography>
            <Command>{'npx signalbox user totp disable --login <login>'}</Command>
          </>
        )}
        <Typography variant="body2" color="text.secondary">
          {t('auth.helpDocker')}
        </Typography>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}
