import { Chip, InputAdornment, TextField } from '@mui/material';
import { CRON_MAX } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/**
 * The optional "Cron schedule" of the template form: the cron its own schedule runs on ('' = none). A paused
 * schedule's cron is marked paused: it does not run until resumed on the Schedule page.
 */
export function CronScheduleField({
  value,
  error,
  paused = false,
  onChange,
}: {
  value: string;
  error: string | null;
  paused?: boolean;
  onChange: (value: string) => void;
}) {
  const { t } = useTranslation();
  const showPaused = paused && !!value.trim();
  return (
    <TextField
      label={t('scheduleList.cron')}
      name="schedule_cron"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={!!error}
      helperText={error ?? (showPaused ? t('scheduleList.cronPaused') : t('scheduleList.cronHelp'))}
      placeholder="0 3 * * *"
      slotProps={{
        htmlInput: { maxLength: CRON_MAX, spellCheck: false, style: { fontFamily: 'monospace' } },
        input: showPaused
          ? {
              endAdornment: (
                <InputAdornment position="end">
                  <Chip size="small" color="warning" label={t('scheduleList.paused')} data-schedule-paused />
                </InputAdornment>
              ),
            }
          : undefined,
      }}
      sx={{ mt: 1 }}
      fullWidth
    />
  );
}
