import { Box, Link, TableCell, TableRow, Typography } from '@mui/material';
import type { Integration, Template } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { useEditDialog } from '../../components/edit-dialog';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody } from '../../components/ui';
import { AliasList } from './AliasList';
import { IntegrationDialog } from './IntegrationDialog';

/** /project/{id}/integrations: list, create/edit/delete, and the project-level aliases. */
export default function IntegrationsPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const integrations = useResourceList<Integration>(project.id, 'integrations');
  const templates = useResourceList<Template>(project.id, 'templates');
  const dialog = useEditDialog<Integration>();
  const write = can('updateProject');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'integrations',
    objectKey: 'refs.objects.integration',
    deletedKey: 'integrations.deleted',
  });
  const templateName = (id: number) => templates.data?.find((x) => x.id === id)?.name ?? `#${id}`;

  return (
    <>
      <PageHeader
        title={t('nav.integrations')}
        actions={write && <NewButton label={t('integrations.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.integrations')}
          items={integrations.data}
          error={integrations.error}
          loading={integrations.isPending}
          empty={t('integrations.empty')}
          withActions={write}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('res.template')}</TableCell>
              <TableCell>{t('integrations.authMethod')}</TableCell>
            </>
          }
        >
          {(i) => (
            <TableRow key={i.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>
                <Link component={RouterLink} to={`/project/${project.id}/integration/${i.id}`}>
                  {i.name}
                </Link>
              </TableCell>
              <TableCell sx={{ wordBreak: 'break-word' }}>{templateName(i.template_id)}</TableCell>
              <TableCell>{t(`integrations.methods.${i.auth_method || 'none'}`)}</TableCell>
              {write && (
                <RowActions name={i.name} onEdit={() => dialog.edit(i)} onDelete={() => void del.start(i)} />
              )}
            </TableRow>
          )}
        </ResourceTable>
        {/* Alias URLs start tasks: only members who may run tasks see them. */}
        {can('runProjectTasks') && (
          <Box sx={{ mt: 3 }}>
            <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1 }}>
              {t('integrations.projectAliases')}
            </Typography>
            <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
              {t('integrations.projectAliasesHelp')}
            </Typography>
            <AliasList projectId={project.id} integrationId={null} canWrite={write} />
          </Box>
        )}
      </PageBody>
      {dialog.open && <IntegrationDialog projectId={project.id} item={dialog.item} onClose={dialog.close} />}
      {del.element}
    </>
  );
}
