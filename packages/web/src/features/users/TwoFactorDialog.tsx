import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DownloadIcon from '@mui/icons-material/Download';
import VerifiedUserIcon from '@mui/icons-material/VerifiedUser';
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  InputAdornment,
  Stack,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
  Tooltip,
  Typography,
} from '@mui/material';
import type { TotpEnrollment, User } from '@signalbox/contracts';
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { saveFile } from '../../api/client';
import { useLoginOptions } from '../../api/session';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { serverFieldText } from '../../i18n/messages';
import { totpQrUrl, useConfirmTotp, useDisableTotp, useStartTotp, useTotpStatus } from './totp-api';

/** Six digits, spaces between them allowed (apps show "123 456"). */
export const isPasscode = (text: string) => /^\d{6}$/.test(text.replace(/\s+/g, ''));
const digitsOnly = (text: string) => text.replace(/\s+/g, '');
/** The secret in groups of four, as authenticator apps ask for it. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

type Step =
  | { name: 'overview' }
  | { name: 'scan'; enrollment: TotpEnrollment }
  | { name: 'codes'; codes: string[] };

/**
 * The signed-in user's two-factor sign-in (TOTP): set it up (a QR code and the secret as text, then a first code
 * from the app), see the recovery codes once (copy or download), or turn it off with a code or the password.
 */
export function TwoFactorDialog({ open, user, onClose }: { open: boolean; user: User; onClose: () => void }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const allowRecovery = useLoginOptions().data?.auth_methods?.totp?.allow_recovery ?? false;
  const status = useTotpStatus(user.id, open);
  const start = useStartTotp(user.id);
  const confirm = useConfirmTotp(user.id);
  const disable = useDisableTotp(user.id);
  const [step, setStep] = useState<Step>({ name: 'overview' });
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState('');
  const [proofKind, setProofKind] = useState<'passcode' | 'password'>('passcode');

  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      setStep({ name: 'overview' });
      setCode('');
      setCodeError('');
      setProofKind('passcode');
      start.reset();
      confirm.reset();
      disable.reset();
    }
  }, [open]);

  const on = status.data?.confirmed === true;

  const begin = async () => {
    try {
      const enrollment = await start.mutateAsync();
      setCode('');
      setCodeError('');
      setStep({ name: 'scan', enrollment });
    } catch {
      // Shown in the dialog.
    }
  };

  const submitFirstCode = async (event: FormEvent) => {
    event.preventDefault();
    if (step.name !== 'scan') return;
    if (!isPasscode(code)) return setCodeError(t('totp.codeFormat'));
    setCodeError('');
    try {
      const confirmed = await confirm.mutateAsync({ totpId: step.enrollment.id, passcode: digitsOnly(code) });
      notify.success(t('totp.turnedOn'));
      setCode('');
      if (confirmed.recovery_codes.length) setStep({ name: 'codes', codes: confirmed.recovery_codes });
      else setStep({ name: 'overview' });
    } catch {
      // Shown in the dialog.
    }
  };

  const turnOff = async (event: FormEvent) => {
    event.preventDefault();
    if (!status.data) return;
    if (proofKind === 'passcode' && !isPasscode(code)) return setCodeError(t('totp.codeFormat'));
    if (proofKind === 'password' && !code) return setCodeError(t('totp.passwordRequired'));
    setCodeError('');
    const proof = proofKind === 'passcode' ? { passcode: digitsOnly(code) } : { password: code };
    try {
      await disable.mutateAsync({ totpId: status.data.id, proof });
      notify.success(t('totp.turnedOff'));
      setCode('');
    } catch {
      // Shown in the dialog.
    }
  };

  const copy = async (text: string, done: string) => {
    try {
      if (!navigator.clipboard) throw new Error('clipboard');
      await navigator.clipboard.writeText(text);
      notify.success(done);
    } catch {
      notify.error(new Error(t('totp.copyFailed')));
    }
  };

  const codeField = (label: string, type: 'passcode' | 'password', server: unknown) => (
    <TextField
      label={label}
      value={code}
      onChange={(e) => setCode(e.target.value)}
      type={type === 'password' ? 'password' : 'text'}
      autoComplete={type === 'password' ? 'current-password' : 'one-time-code'}
      required
      fullWidth
      error={!!codeError || !!serverFieldText(server, type, t)}
      helperText={codeError || serverFieldText(server, type, t)}
      slotProps={{
        htmlInput:
          type === 'passcode'
            ? { inputMode: 'numeric', maxLength: 7, sx: { fontFamily: 'monospace', letterSpacing: 2 } }
            : { maxLength: 255 },
      }}
    />
  );

  let content: ReactNode;
  let actions: ReactNode;
  if (step.name === 'scan') {
    const { enrollment } = step;
    content = (
      <form id="totp-confirm" onSubmit={(e) => void submitFirstCode(e)} noValidate>
        <FormError
          error={confirm.error && !serverFieldText(confirm.error, 'passcode', t) ? confirm.error : null}
        />
        <Typography variant="body2" sx={{ mb: 1.5 }}>
          {t('totp.scanStep')}
        </Typography>
        <Box
          component="img"
          src={totpQrUrl(user.id, enrollment.id)}
          alt={t('totp.qrAlt')}
          sx={{
            display: 'block',
            mx: 'auto',
            width: 200,
            height: 200,
            bgcolor: '#fff',
            borderRadius: 1,
            border: 1,
            borderColor: 'divider',
          }}
        />
        <Typography variant="body2" color="text.secondary" sx={{ mt: 2, mb: 1 }}>
          {t('totp.manualStep')}
        </Typography>
        <TextField
          value={grouped(enrollment.secret)}
          label={t('totp.secret')}
          fullWidth
          multiline
          size="small"
          onFocus={(e) => e.target.select()}
          slotProps={{
            // Wraps between groups on a phone rather than hiding the key's end.
            htmlInput: { readOnly: true, spellCheck: false, sx: { fontFamily: 'monospace', fontSize: 14 } },
            input: {
              endAdornment: (
                <InputAdornment position="end">
                  <Tooltip title={t('totp.copySecret')}>
                    <IconButton
                      aria-label={t('totp.copySecret')}
                      edge="end"
                      onClick={() => void copy(enrollment.secret, t('totp.secretCopied'))}
                    >
                      <ContentCopyIcon fontSize="small" />
                    </IconButton>
                  </Tooltip>
                </InputAdornment>
              ),
            },
          }}
        />
        <Typography variant="body2" sx={{ mt: 2.5, mb: 1.5 }}>
          {t('totp.confirmStep')}
        </Typography>
        {codeField(t('totp.code'), 'passcode', confirm.error)}
      </form>
    );
    actions = (
      <>
        <Button onClick={() => setStep({ name: 'overview' })}>{t('common.cancel')}</Button>
        <Button type="submit" form="totp-confirm" variant="contained" disabled={confirm.isPending}>
          {t('totp.turnOn')}
        </Button>
      </>
    );
  } else if (step.name === 'codes') {
    const text = step.codes.join('\n');
    content = (
      <>
        <Alert severity="warning" sx={{ mb: 2 }} role="status">
          {t('totp.codesOnce')}
        </Alert>
        <Box
          component="ul"
          aria-label={t('totp.recoveryCodes')}
          sx={{
            listStyle: 'none',
            p: 2,
            m: 0,
            display: 'grid',
            gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr' },
            gap: 1,
            fontFamily: 'monospace',
            fontSize: 15,
            bgcolor: 'action.hover',
            borderRadius: 1,
            textAlign: 'center',
          }}
        >
          {step.codes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </Box>
        <Stack direction="row" spacing={1} sx={{ mt: 2, justifyContent: 'center' }}>
          <Button startIcon={<ContentCopyIcon />} onClick={() => void copy(text, t('totp.codesCopied'))}>
            {t('totp.copyCodes')}
          </Button>
          <Button
            startIcon={<DownloadIcon />}
            onClick={() => saveFile('signalbox-recovery-codes.txt', `${text}\n`, 'text/plain')}
          >
            {t('totp.downloadCodes')}
          </Button>
        </Stack>
      </>
    );
    actions = (
      <Button variant="contained" onClick={() => setStep({ name: 'overview' })}>
        {t('totp.savedCodes')}
      </Button>
    );
  } else if (on && status.data) {
    content = (
      <form id="totp-off" onSubmit={(e) => void turnOff(e)} noValidate>
        <FormError
          error={disable.error && !serverFieldText(disable.error, proofKind, t) ? disable.error : null}
        />
        <Alert severity="success" icon={<VerifiedUserIcon />} sx={{ mb: 2 }}>
          {t('totp.isOn')}
          {allowRecovery && (
            <Typography variant="body2" sx={{ mt: 0.5 }}>
              {t('totp.codesLeft', { count: status.data.recovery_codes_left })}
            </Typography>
          )}
        </Alert>
        <Typography variant="subtitle2" sx={{ mb: 0.5 }}>
          {t('totp.turnOffTitle')}
        </Typography>
        <Typography variant="body2" color="text.secondary" sx={{ mb: 1.5 }}>
          {t('totp.turnOffIntro')}
        </Typography>
        <ToggleButtonGroup
          exclusive
          size="small"
          value={proofKind}
          onChange={(_e, kind) => {
            if (!kind) return;
            setProofKind(kind);
            setCode('');
            setCodeError('');
            disable.reset();
          }}
          sx={{ mb: 2 }}
        >
          <ToggleButton value="passcode">{t('totp.withCode')}</ToggleButton>
          <ToggleButton value="password" disabled={user.external}>
            {t('totp.withPassword')}
          </ToggleButton>
        </ToggleButtonGroup>
        {codeField(
          proofKind === 'passcode' ? t('totp.code') : t('fields.password'),
          proofKind,
          disable.error,
        )}
      </form>
    );
    actions = (
      <>
        <Button onClick={onClose}>{t('common.close')}</Button>
        <Button type="submit" form="totp-off" color="error" variant="contained" disabled={disable.isPending}>
          {t('totp.turnOff')}
        </Button>
      </>
    );
  } else {
    content = (
      <>
        <FormError error={start.error ?? status.error} />
        <Typography variant="body2" sx={{ mb: 1.5 }}>
          {t('totp.intro')}
        </Typography>
        <Typography variant="body2" color="text.secondary">
          {allowRecovery ? t('totp.introRecovery') : t('totp.introNoRecovery')}
        </Typography>
      </>
    );
    actions = (
      <>
        <Button onClick={onClose}>{t('common.close')}</Button>
        <Button
          variant="contained"
          onClick={() => void begin()}
          disabled={start.isPending || status.isPending}
        >
          {t('totp.setUp')}
        </Button>
      </>
    );
  }

  return (
    <Dialog
      open={open}
      // The recovery codes are shown once: a click beside the dialog must not lose them.
      onClose={step.name === 'codes' ? undefined : onClose}
      fullWidth
      maxWidth="xs"
      aria-labelledby="totp-title"
    >
      <DialogTitle id="totp-title">{t('totp.title')}</DialogTitle>
      <DialogContent>{content}</DialogContent>
      <DialogActions>{actions}</DialogActions>
    </Dialog>
  );
}
