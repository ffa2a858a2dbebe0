import ErrorOutlineIcon from '@mui/icons-material/ErrorOutlineOutlined';
import { Box, Button, CircularProgress, Paper, Stack, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { signOut } from '../api/session';

/** App state "loading". */
export function Spinner({ full = true }: { full?: boolean }) {
  const { t } = useTranslation();
  return (
    <Box
      role="progressbar"
      aria-label={t('app.loading')}
      sx={{
        display: 'flex',
        alignItems: 'center',
        justifyContent: 'center',
        minHeight: full ? '100vh' : 240,
      }}
    >
      <CircularProgress />
    </Box>
  );
}

/** App state "error": the message, Refresh page and Re-login. */
export function ErrorPage({ message }: { message: string }) {
  const { t } = useTranslation();
  return (
    <Box sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', p: 2 }}>
      <Paper variant="outlined" sx={{ p: 4, maxWidth: 480, width: '100%', textAlign: 'center' }}>
        <ErrorOutlineIcon color="error" sx={{ fontSize: 48 }} />
        <Typography variant="h5" component="h1" sx={{ mt: 1 }}>
          {t('app.errorTitle')}
        </Typography>
        <Typography color="text.secondary" sx={{ mt: 1, mb: 3, wordBreak: 'break-word' }}>
          {message}
        </Typography>
        <Stack direction="row" spacing={2} sx={{ justifyContent: 'center' }}>
          <Button variant="contained" onClick={() => window.location.reload()}>
            {t('app.refreshPage')}
          </Button>
          <Button variant="outlined" onClick={() => void signOut()}>
            {t('app.relogin')}
          </Button>
        </Stack>
      </Paper>
    </Box>
  );
}
