import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Box,
  Button,
  IconButton,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import type { Integration, Template } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { useDeleteFlow } from '../templates/shared/DeleteFlow';
import { actionsSx, ErrorAlert, PageBody, TableFrame, useResourceNotify } from '../templates/shared/ui';
import { AliasList } from './AliasList';
import { IntegrationDialog } from './IntegrationDialog';

/** /project/{id}/integrations: list, create/edit/delete, and the project-level aliases. */
export default function IntegrationsPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const integrations = useResourceList<Integration>(project.id, 'integrations');
  const templates = useResourceList<Template>(project.id, 'templates');
  const remove = useResourceDelete(project.id, 'integrations');
  const [editing, setEditing] = useState<Integration | 'new' | null>(null);
  const write = can('updateProject');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'integrations',
    objectKey: 'refs.objects.integration',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (i) => notify.success(t('integrations.deleted', { name: i.name })),
  });
  const list = integrations.data ?? [];
  const templateName = (id: number) => templates.data?.find((x) => x.id === id)?.name ?? `#${id}`;

  return (
    <>
      <PageHeader
        title={t('nav.integrations')}
        actions={
          write && (
            <Button variant="contained" startIcon={<AddIcon />} onClick={() => setEditing('new')}>
              {t('integrations.new')}
            </Button>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={integrations.error} />
        {integrations.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('integrations.empty')}>
            <Table size="small" aria-label={t('nav.integrations')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('res.template')}</TableCell>
                  <TableCell>{t('integrations.authMethod')}</TableCell>
                  {write && (
                    <TableCell align="right" sx={actionsSx}>
                      {t('common.actions')}
                    </TableCell>
                  )}
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((i) => (
                  <TableRow key={i.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>
                      <Link component={RouterLink} to={`/project/${project.id}/integration/${i.id}`}>
                        {i.name}
                      </Link>
                    </TableCell>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{templateName(i.template_id)}</TableCell>
                    <TableCell>{t(`integrations.methods.${i.auth_method || 'none'}`)}</TableCell>
                    {write && (
                      <TableCell align="right" sx={actionsSx}>
                        <Tooltip title={t('res.edit')}>
                          <IconButton
                            aria-label={t('res.editNamed', { name: i.name })}
                            onClick={() => setEditing(i)}
                          >
                            <EditIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: i.name })}
                            onClick={() => void del.start(i)}
                          >
                            <DeleteIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      </TableCell>
                    )}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
        )}
        <Box sx={{ mt: 3 }}>
          <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, mb: 1 }}>
            {t('integrations.projectAliases')}
          </Typography>
          <Typography variant="body2" color="text.secondary" sx={{ mb: 1 }}>
            {t('integrations.projectAliasesHelp')}
          </Typography>
          <AliasList projectId={project.id} integrationId={null} canWrite={write} />
        </Box>
      </PageBody>
      {editing && (
        <IntegrationDialog
          projectId={project.id}
          item={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      {del.element}
    </>
  );
}
