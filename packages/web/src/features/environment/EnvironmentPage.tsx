import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Button, IconButton, Table, TableBody, TableCell, TableHead, TableRow, Tooltip } from '@mui/material';
import type { Environment } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { useDeleteFlow } from '../templates/shared/DeleteFlow';
import { actionsSx, ErrorAlert, PageBody, TableFrame, useResourceNotify } from '../templates/shared/ui';
import { EnvironmentDialog } from './EnvironmentDialog';

/** /project/{id}/environment. */
export default function EnvironmentPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const envs = useResourceList<Environment>(project.id, 'environment');
  const remove = useResourceDelete(project.id, 'environment');
  const [editing, setEditing] = useState<Environment | 'new' | null>(null);
  const manage = can('manageProjectResources');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'environment',
    objectKey: 'refs.objects.environment',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (e) => notify.success(t('environment.deleted', { name: e.name })),
  });
  const list = envs.data ?? [];

  return (
    <>
      <PageHeader
        title={t('nav.environment')}
        actions={
          manage && (
            <Button variant="contained" startIcon={<AddIcon />} onClick={() => setEditing('new')}>
              {t('environment.new')}
            </Button>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={envs.error} />
        {envs.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('environment.empty')}>
            <Table size="small" aria-label={t('nav.environment')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('environment.secrets')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((env) => (
                  <TableRow key={env.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{env.name}</TableCell>
                    <TableCell>{env.secrets?.length ?? 0}</TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: env.name })}
                          onClick={() => setEditing(env)}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      {manage && (
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: env.name })}
                            onClick={() => void del.start(env)}
                          >
                            <DeleteIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      )}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
        )}
      </PageBody>
      {editing && (
        <EnvironmentDialog
          projectId={project.id}
          item={editing === 'new' ? null : editing}
          readOnly={!manage}
          onClose={() => setEditing(null)}
        />
      )}
      {del.element}
    </>
  );
}
