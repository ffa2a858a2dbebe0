import { FormControlLabel, Radio, RadioGroup, Stack, TextField } from '@mui/material';
import type { WorkflowDelayNode } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

/** A delay node's settings: wait a number of seconds, or until the next time of day in a time zone. */
export function DelayNodeFields({
  node,
  onChange,
  fieldError,
}: {
  node: WorkflowDelayNode;
  onChange: (patch: Partial<WorkflowDelayNode>) => void;
  fieldError: (field: string) => string | undefined;
}) {
  const { t } = useTranslation();
  const err = (field: string) => {
    const text = fieldError(field);
    return text ? { error: true, helperText: text } : {};
  };
  const byTime = node.time_of_day !== null;
  return (
    <Stack spacing={2}>
      <RadioGroup
        aria-label={t('wf.delay.kind')}
        value={byTime ? 'time' : 'seconds'}
        onChange={(e) =>
          onChange(
            e.target.value === 'time'
              ? { seconds: null, time_of_day: '09:00' }
              : { seconds: 60, time_of_day: null },
          )
        }
      >
        <FormControlLabel value="seconds" control={<Radio />} label={t('wf.delay.duration')} />
        <FormControlLabel value="time" control={<Radio />} label={t('wf.delay.untilTime')} />
      </RadioGroup>
      {byTime ? (
        <>
          <TextField
            size="small"
            type="time"
            label={t('wf.delay.timeOfDay')}
            value={node.time_of_day ?? ''}
            onChange={(e) => onChange({ time_of_day: e.target.value || null })}
            slotProps={{ inputLabel: { shrink: true } }}
            {...err('time_of_day')}
          />
          <TextField
            size="small"
            label={t('wf.delay.timezone')}
            value={node.timezone}
            onChange={(e) => onChange({ timezone: e.target.value })}
            slotProps={{ htmlInput: { maxLength: 64 } }}
            {...(fieldError('timezone') ? err('timezone') : { helperText: t('wf.delay.timezoneHelp') })}
          />
        </>
      ) : (
        <TextField
          size="small"
          type="number"
          label={t('wf.delay.seconds')}
          value={node.seconds ?? ''}
          onChange={(e) =>
            onChange({ seconds: /^\d+$/.test(e.target.value) ? Number(e.target.value) : null })
          }
          slotProps={{ htmlInput: { min: 0 } }}
          {...err('seconds')}
        />
      )}
    </Stack>
  );
}
