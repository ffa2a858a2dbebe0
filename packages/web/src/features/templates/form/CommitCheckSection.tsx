import { Box, MenuItem, Stack, TextField, Typography } from '@mui/material';
import { commitCheckIntervals, type Repository } from '@signalbox/contracts';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { FlagCheckbox, IdSelect } from './fields';
import type { SectionProps } from './values';

/** Catalogue keys of the check-new-commits intervals, in the order of commitCheckIntervals. */
const intervalKeys = ['min1', 'min5', 'min10', 'hour1', 'hour24'] as const;

/** "Schedule": run the template when its repository gets new commits, checked at an interval. */
export function CommitCheckSection({
  repositories,
  ...section
}: SectionProps & { repositories: Repository[] }) {
  const { t } = useTranslation();
  const { form } = section;
  const checkCommits = !!form.watch('check_new_commits');
  return (
    <Box sx={{ pt: 1 }}>
      <Typography variant="subtitle2" component="h3">
        {t('tpl.schedule')}
      </Typography>
      <FlagCheckbox form={form} name="check_new_commits" label={t('tpl.checkNewCommits')} />
      {checkCommits && (
        <Stack spacing={2} sx={{ mt: 1 }}>
          <IdSelect
            {...section}
            name="check_new_commits_repository_id"
            label={t('res.repository')}
            options={repositories}
            required
          />
          <Controller
            control={form.control}
            name="cron_format"
            render={({ field: f }) => (
              <TextField
                select
                label={t('tpl.interval')}
                value={f.value || '* * * * *'}
                onChange={f.onChange}
                name={f.name}
              >
                {commitCheckIntervals.map((i, index) => (
                  <MenuItem key={i.cron} value={i.cron}>
                    {t(`tpl.intervals.${intervalKeys[index]}`)}
                  </MenuItem>
                ))}
                {!commitCheckIntervals.some((i) => i.cron === f.value) && f.value && (
                  <MenuItem value={f.value}>{f.value}</MenuItem>
                )}
              </TextField>
            )}
          />
        </Stack>
      )}
    </Box>
  );
}
