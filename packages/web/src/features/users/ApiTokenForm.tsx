import {
  Autocomplete,
  Box,
  Button,
  Checkbox,
  Chip,
  FormControl,
  FormControlLabel,
  FormGroup,
  FormHelperText,
  FormLabel,
  MenuItem,
  Stack,
  TextField,
} from '@mui/material';
import { type Project, type TokenScope, tokenScopes, type User } from '@signalbox/contracts';
import { useEffect } from 'react';
import { Controller, useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useProjects } from '../../api/session';
import { CheckboxField, FormError } from '../../components/forms';
import { useCreateApiToken } from './api';

/** Lifetimes offered for a new token, in days; 0 = it never expires. */
const lifetimes = [0, 7, 30, 90, 365] as const;

type Values = {
  name: string;
  lifetime: number;
  scopes: Record<TokenScope, boolean>;
  allProjects: boolean;
  projects: Project[];
};

const blank = (): Values => ({
  name: '',
  lifetime: 90,
  scopes: { read: true, run: true, write: true, admin: true },
  allProjects: true,
  projects: [],
});

/**
 * Creates an API token: name, lifetime, what it may do (every scope, the default, is the user's full rights) and
 * where (every project of the user, the default, or some of them). Hands the new token's secret to `onCreated`.
 * The admin scope is offered only to administrators: for anyone else it would give nothing.
 */
export function ApiTokenForm({
  open,
  user,
  onCreated,
}: {
  open: boolean;
  user: User | undefined;
  onCreated: (token: string) => void;
}) {
  const { t } = useTranslation();
  const create = useCreateApiToken();
  const projects = useProjects();
  const { register, handleSubmit, reset, control, watch, setError, clearErrors, formState } = useForm<Values>(
    {
      defaultValues: blank(),
    },
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the dialog opens
  useEffect(() => {
    if (open) {
      reset(blank());
      create.reset();
    }
  }, [open, reset]);

  const offered = tokenScopes.filter((scope) => scope !== 'admin' || user?.admin);
  const allProjects = watch('allProjects');

  const submit = handleSubmit(async (values) => {
    const chosen = offered.filter((scope) => values.scopes[scope]);
    if (chosen.length === 0) return setError('scopes', { message: t('tokens.needScope') });
    if (!values.allProjects && values.projects.length === 0)
      return setError('projects', { message: t('tokens.needProject') });
    // Every scope offered is the user's full rights: sent as none (a user who is no administrator has no admin
    // rights to give).
    const full = chosen.length === offered.length;
    try {
      const created = await create.mutateAsync({
        name: values.name.trim(),
        expires_in_days: values.lifetime || null,
        scopes: full ? null : chosen,
        project_ids: values.allProjects ? null : values.projects.map((p) => p.id),
      });
      onCreated(created.token);
      reset(blank());
    } catch {
      // Shown in the form's alert.
    }
  });

  return (
    <form
      onSubmit={(e) => {
        // The choices are checked on submit (below), not by field rules: a new submit starts without their errors.
        clearErrors();
        void submit(e);
      }}
      noValidate
      aria-label={t('tokens.create')}
    >
      <FormError error={create.error} />
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1.5} sx={{ alignItems: { sm: 'flex-start' } }}>
        <TextField
          label={t('fields.name')}
          size="small"
          sx={{ flex: 1 }}
          slotProps={{ htmlInput: { maxLength: 100 } }}
          {...register('name')}
        />
        <Controller
          control={control}
          name="lifetime"
          render={({ field }) => (
            <TextField
              select
              label={t('tokens.lifetime')}
              value={field.value}
              onChange={(e) => field.onChange(Number(e.target.value))}
              size="small"
              sx={{ minWidth: 140 }}
            >
              {lifetimes.map((days) => (
                <MenuItem key={days} value={days}>
                  {days ? t('tokens.days', { days }) : t('tokens.never')}
                </MenuItem>
              ))}
            </TextField>
          )}
        />
        <Button type="submit" variant="contained" disabled={create.isPending} sx={{ whiteSpace: 'nowrap' }}>
          {t('tokens.create')}
        </Button>
      </Stack>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mt: 1.5 }}>
        <FormControl component="fieldset" error={!!formState.errors.scopes} sx={{ flex: 1 }}>
          <FormLabel component="legend">{t('tokens.scopes')}</FormLabel>
          <FormGroup>
            {offered.map((scope) => (
              <Box key={scope}>
                <CheckboxField
                  control={control}
                  name={`scopes.${scope}`}
                  label={t(`tokens.scope.${scope}`)}
                />
                <FormHelperText sx={{ mt: -1, ml: 4 }}>{t(`tokens.scopeHint.${scope}`)}</FormHelperText>
              </Box>
            ))}
          </FormGroup>
          {formState.errors.scopes?.message && (
            <FormHelperText>{formState.errors.scopes.message}</FormHelperText>
          )}
        </FormControl>
        <FormControl component="fieldset" error={!!formState.errors.projects} sx={{ flex: 1 }}>
          <FormLabel component="legend">{t('tokens.projects')}</FormLabel>
          <Controller
            control={control}
            name="allProjects"
            render={({ field }) => (
              <FormControlLabel
                label={t('tokens.allProjects')}
                control={
                  <Checkbox
                    checked={field.value}
                    onChange={(e) => field.onChange(e.target.checked)}
                    name={field.name}
                  />
                }
              />
            )}
          />
          {!allProjects && (
            <Controller
              control={control}
              name="projects"
              render={({ field }) => (
                <Autocomplete
                  multiple
                  size="small"
                  options={projects.data ?? []}
                  loading={projects.isLoading}
                  value={field.value}
                  onChange={(_e, value) => field.onChange(value)}
                  getOptionLabel={(project) => project.name}
                  isOptionEqualToValue={(a, b) => a.id === b.id}
                  renderValue={(value, getItemProps) =>
                    value.map((project, index) => {
                      const { key, ...props } = getItemProps({ index });
                      return <Chip key={key} size="small" label={project.name} {...props} />;
                    })
                  }
                  renderInput={(params) => (
                    <TextField
                      {...params}
                      label={t('tokens.chooseProjects')}
                      error={!!formState.errors.projects}
                      helperText={formState.errors.projects?.message}
                    />
                  )}
                />
              )}
            />
          )}
        </FormControl>
      </Stack>
    </form>
  );
}
