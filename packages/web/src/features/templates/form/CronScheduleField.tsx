import { TextField } from '@mui/material';
import { CRON_MAX } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/** The optional "Cron schedule" of the template form: the cron its own schedule runs on ('' = none). */
export function CronScheduleField({
  value,
  error,
  onChange,
}: {
  value: string;
  error: string | null;
  onChange: (value: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <TextField
      label={t('scheduleList.cron')}
      name="schedule_cron"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={!!error}
      helperText={error ?? t('scheduleList.cronHelp')}
      placeholder="0 3 * * *"
      slotProps={{
        htmlInput: { maxLength: CRON_MAX, spellCheck: false, style: { fontFamily: 'monospace' } },
      }}
      sx={{ mt: 1 }}
      fullWidth
    />
  );
}
