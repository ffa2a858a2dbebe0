import { Box } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../components/PageHeader';

/**
 * The page frame for project resources whose screens live in their own feature folders (templates,
 * schedules, inventory, environment, keys, repositories, integrations). Replace the route's element in
 * app/SessionRoot.tsx with the feature's page.
 */
export default function ResourcePage({ titleKey }: { titleKey: string }) {
  const { t } = useTranslation();
  return (
    <Box>
      <PageHeader title={t(titleKey)} />
    </Box>
  );
}
