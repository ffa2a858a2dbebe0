import { Tab, Tabs } from '@mui/material';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import type { SectionProps } from './values';

/** The template's type (task, build, deploy), as tabs across the top of the form. */
export function TypeTabs({ form }: Pick<SectionProps, 'form'>) {
  const { t } = useTranslation();
  return (
    <Controller
      control={form.control}
      name="type"
      render={({ field: f }) => (
        <Tabs
          value={f.value ?? ''}
          onChange={(_, v) => f.onChange(v)}
          aria-label={t('res.type')}
          variant="fullWidth"
          sx={{ borderBottom: 1, borderColor: 'divider' }}
        >
          <Tab value="" label={t('tpl.types.task')} />
          <Tab value="build" label={t('tpl.types.build')} />
          <Tab value="deploy" label={t('tpl.types.deploy')} />
        </Tabs>
      )}
    />
  );
}
