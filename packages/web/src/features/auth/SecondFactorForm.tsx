import { Button, Link, Stack, TextField, Typography } from '@mui/material';
import { TOTP_REQUIRED } from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, api } from '../../api/client';
import { FormError } from '../../components/forms';

/** Whether an answer says the session waits for its second factor (the peer's 401 `TOTP_REQUIRED`). */
export const awaitsSecondFactor = (err: unknown) =>
  err instanceof ApiError && err.status === 401 && err.body?.code === TOTP_REQUIRED.code;

const RECOVERY = /^[A-Z2-7]{16}$/;

/**
 * The second step of signing in when the user has two-factor sign-in on: a code from the authenticator app, or
 * (when the server allows them) a one-time recovery code. `onBack` signs the half-done session out.
 */
export function SecondFactorForm({
  allowRecovery,
  onDone,
  onBack,
}: {
  allowRecovery: boolean;
  onDone: () => void;
  onBack: () => void;
}) {
  const { t } = useTranslation();
  const [recovery, setRecovery] = useState(false);
  const [value, setValue] = useState('');
  const [fieldError, setFieldError] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const compact = value.replace(recovery ? /[\s-]+/g : /\s+/g, '');
    const valid = recovery ? RECOVERY.test(compact.toUpperCase()) : /^\d{6}$/.test(compact);
    if (!valid) return setFieldError(recovery ? t('totp.recoveryFormat') : t('totp.codeFormat'));
    setFieldError('');
    setBusy(true);
    try {
      if (recovery) await api('/auth/recovery', { method: 'POST', body: { recovery_code: compact } });
      else await api('/auth/verify', { method: 'POST', body: { passcode: compact } });
      onDone();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const switchMode = () => {
    setRecovery(!recovery);
    setValue('');
    setFieldError('');
    setError(null);
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label={t('totp.signInTitle')}>
      <Stack spacing={2}>
        <Typography variant="h6" component="h2" sx={{ textAlign: 'center' }}>
          {t('totp.signInTitle')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ textAlign: 'center' }}>
          {recovery ? t('totp.signInRecoveryIntro') : t('totp.signInIntro')}
        </Typography>
        <FormError error={error} />
        <TextField
          key={recovery ? 'recovery' : 'code'}
          label={recovery ? t('totp.recoveryCode') : t('totp.code')}
          value={value}
          onChange={(e) => setValue(e.target.value)}
          autoComplete={recovery ? 'off' : 'one-time-code'}
          autoFocus
          required
          error={!!fieldError}
          helperText={fieldError || undefined}
          slotProps={{
            htmlInput: recovery
              ? {
                  maxLength: 40,
                  spellCheck: false,
                  sx: { fontFamily: 'monospace', textTransform: 'uppercase' },
                }
              : { inputMode: 'numeric', maxLength: 7, sx: { fontFamily: 'monospace', letterSpacing: 3 } },
          }}
        />
        <Button type="submit" variant="contained" size="large" disabled={busy}>
          {t('totp.verify')}
        </Button>
        <Stack direction="row" sx={{ justifyContent: allowRecovery ? 'space-between' : 'flex-end' }}>
          {allowRecovery && (
            <Link component="button" type="button" variant="body2" onClick={switchMode}>
              {recovery ? t('totp.useCode') : t('totp.useRecovery')}
            </Link>
          )}
          <Link component="button" type="button" variant="body2" onClick={onBack}>
            {t('totp.back')}
          </Link>
        </Stack>
      </Stack>
    </form>
  );
}
