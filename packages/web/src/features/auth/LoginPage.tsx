import { zodResolver } from '@hookform/resolvers/zod';
import GitHubIcon from '@mui/icons-material/GitHub';
import GoogleIcon from '@mui/icons-material/Google';
import LoginIcon from '@mui/icons-material/Login';
import TranslateIcon from '@mui/icons-material/Translate';
import { Box, Button, Divider, Link, Paper, Stack, TextField, Typography } from '@mui/material';
import { type LoginInput, loginInput, type OidcProviderInfo } from '@signalbox/contracts';
import { useEffect, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { ApiError, api, baseUrl } from '../../api/client';
import { useLoginOptions } from '../../api/session';
import { FormError, useFieldError } from '../../components/forms';
import { LanguageMenu } from '../../components/LanguageMenu';
import { Spinner } from '../../components/states';
import { HelpDialog } from './HelpDialog';
import { awaitsSecondFactor, SecondFactorForm } from './SecondFactorForm';

const base = () => `${baseUrl}/`;

function ProviderIcon({ icon }: { icon: string }) {
  if (/^(https?:|data:|\/)/.test(icon))
    return <Box component="img" src={icon} alt="" sx={{ width: 20, height: 20 }} />;
  const name = icon.replace(/^mdi-/, '').toLowerCase();
  if (name === 'github') return <GitHubIcon />;
  if (name === 'google') return <GoogleIcon />;
  return <LoginIcon />;
}

function ProviderButton({ provider }: { provider: OidcProviderInfo }) {
  const { t } = useTranslation();
  return (
    <Button
      variant="contained"
      size="large"
      fullWidth
      startIcon={<ProviderIcon icon={provider.icon} />}
      href={`${baseUrl}/api/auth/oidc/${encodeURIComponent(provider.id)}/login${window.location.search}`}
      sx={
        provider.color
          ? { bgcolor: provider.color, '&:hover': { bgcolor: provider.color, filter: 'brightness(0.9)' } }
          : undefined
      }
    >
      {t('auth.signInWith', { name: provider.name })}
    </Button>
  );
}

/** /auth/login. */
export default function LoginPage() {
  const { t } = useTranslation();
  const options = useLoginOptions();
  const fieldError = useFieldError();
  const [help, setHelp] = useState(false);
  const [langMenu, setLangMenu] = useState<HTMLElement | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [checking, setChecking] = useState(true);
  // Signed in with the password, waiting for a code (the user has two-factor sign-in on).
  const [secondFactor, setSecondFactor] = useState(false);
  const { register, handleSubmit, formState } = useForm<LoginInput>({
    mode: 'onSubmit',
    resolver: zodResolver(loginInput),
    defaultValues: { auth: '', password: '' },
  });

  // A session already present goes to the base address; one waiting for its code asks for it.
  useEffect(() => {
    api('/user')
      .then(() => window.location.replace(base()))
      .catch((err) => {
        setSecondFactor(awaitsSecondFactor(err));
        setChecking(false);
      });
  }, []);
  const enter = () => window.location.assign(`${base()}${window.location.search}`);

  const submit = handleSubmit(async (values) => {
    setError(null);
    try {
      await api('/auth/login', { method: 'POST', body: values });
      try {
        await api('/user');
      } catch (err) {
        if (awaitsSecondFactor(err)) return setSecondFactor(true);
      }
      enter();
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? new Error('Incorrect login or password') : err,
      );
    }
  });

  if (checking || options.isPending) return <Spinner />;
  const providers = options.data?.oidc_providers ?? [];
  const withPassword = options.data?.login_with_password ?? true;

  return (
    <Box
      sx={{
        minHeight: '100vh',
        display: 'flex',
        alignItems: 'center',
        justifyContent: 'center',
        p: 2,
        background: (theme) =>
          theme.palette.mode === 'dark'
            ? 'radial-gradient(circle at 30% 20%, #1f2a44 0, #121417 60%)'
            : 'radial-gradient(circle at 30% 20%, #dfe8ff 0, #f6f7f9 60%)',
      }}
    >
      <Paper elevation={3} sx={{ p: { xs: 3, sm: 5 }, width: '100%', maxWidth: 420 }}>
        <Stack spacing={1} sx={{ alignItems: 'center', mb: 3 }}>
          <Box component="img" src={`${baseUrl}/favicon.svg`} alt="" sx={{ width: 56, height: 56 }} />
          <Typography variant="h5" component="h1" sx={{ fontWeight: 700 }}>
            {t('auth.title')}
          </Typography>
          <Typography color="text.secondary" variant="body2">
            {t('auth.subtitle')}
          </Typography>
        </Stack>
        {secondFactor && (
          <SecondFactorForm
            allowRecovery={options.data?.auth_methods?.totp?.allow_recovery ?? false}
            onDone={enter}
            onBack={() => {
              setSecondFactor(false);
              void api('/auth/logout', { method: 'POST' }).catch(() => {});
            }}
          />
        )}
        {!secondFactor && <FormError error={error ?? options.error} />}
        {!secondFactor && providers.length > 0 && (
          <Stack spacing={1.5} sx={{ mb: 2 }}>
            {providers.map((p) => (
              <ProviderButton key={p.id} provider={p} />
            ))}
          </Stack>
        )}
        {!secondFactor && providers.length > 0 && withPassword && (
          <Divider sx={{ my: 2 }}>{t('auth.or')}</Divider>
        )}
        {!secondFactor && withPassword && (
          <form onSubmit={submit} noValidate>
            <Stack spacing={2}>
              <TextField
                label={t('fields.username')}
                autoComplete="username"
                autoFocus
                required
                {...register('auth')}
                {...fieldError(formState.errors.auth, undefined, 'auth')}
              />
              <TextField
                label={t('fields.password')}
                type="password"
                autoComplete="current-password"
                required
                {...register('password')}
                {...fieldError(formState.errors.password, undefined, 'password')}
              />
              <Button type="submit" variant="contained" size="large" disabled={formState.isSubmitting}>
                {t('auth.signIn')}
              </Button>
            </Stack>
          </form>
        )}
        <Box sx={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', mt: 3 }}>
          <Link component="button" type="button" variant="body2" onClick={() => setHelp(true)}>
            {t('auth.cantSignIn')}
          </Link>
          <Button size="small" startIcon={<TranslateIcon />} onClick={(e) => setLangMenu(e.currentTarget)}>
            {t('app.language')}
          </Button>
        </Box>
      </Paper>
      <LanguageMenu anchor={langMenu} onClose={() => setLangMenu(null)} />
      <HelpDialog open={help} onClose={() => setHelp(false)} totp={!!options.data?.auth_methods?.totp} />
    </Box>
  );
}
