import { Box, Breadcrumbs, Link, Typography } from '@mui/material';
import type { Template } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';

/** The breadcrumbs above the form: Templates › the template edited › New/Edit. */
export function TemplateFormHeader({
  editing,
  listPath,
}: {
  editing: Template | undefined;
  listPath: string;
}) {
  const { t } = useTranslation();
  return (
    <Box
      sx={{
        px: { xs: 2, md: 3 },
        py: 2,
        borderBottom: 1,
        borderColor: 'divider',
        bgcolor: 'background.paper',
      }}
    >
      <Breadcrumbs aria-label={t('tpl.breadcrumb')} sx={{ '& ol': { flexWrap: 'wrap' } }}>
        <Link component={RouterLink} to={listPath} variant="h6" underline="hover">
          {t('nav.templates')}
        </Link>
        {editing && (
          <Link component={RouterLink} to={`${listPath}/${editing.id}`} variant="h6" underline="hover">
            {editing.name}
          </Link>
        )}
        <Typography variant="h6" component="h1" sx={{ fontWeight: 700 }}>
          {editing ? t('tpl.edit') : t('tpl.new')}
        </Typography>
      </Breadcrumbs>
    </Box>
  );
}
