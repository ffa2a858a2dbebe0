import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Button, IconButton, Table, TableBody, TableCell, TableHead, TableRow, Tooltip } from '@mui/material';
import type { AccessKey } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { useDeleteFlow } from '../templates/shared/DeleteFlow';
import { actionsSx, ErrorAlert, PageBody, TableFrame, useResourceNotify } from '../templates/shared/ui';
import { KeyDialog } from './KeyDialog';

/** /project/{id}/keys: the key store: a full-page table with an edit dialog. */
export default function KeysPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const remove = useResourceDelete(project.id, 'keys');
  const [editing, setEditing] = useState<AccessKey | 'new' | null>(null);
  const manage = can('manageProjectResources');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'keys',
    objectKey: 'refs.objects.key',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (k) => notify.success(t('keyStore.deleted', { name: k.name })),
  });
  const list = keys.data ?? [];

  return (
    <>
      <PageHeader
        title={t('nav.keys')}
        actions={
          manage && (
            <Button variant="contained" startIcon={<AddIcon />} onClick={() => setEditing('new')}>
              {t('keyStore.new')}
            </Button>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={keys.error} />
        {keys.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('keyStore.empty')}>
            <Table size="small" aria-label={t('nav.keys')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('res.type')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((k) => (
                  <TableRow key={k.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{k.name}</TableCell>
                    <TableCell>{t(`keyStore.types.${k.type}`)}</TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: k.name })}
                          onClick={() => setEditing(k)}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      {manage && (
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: k.name })}
                            onClick={() => void del.start(k)}
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
        <KeyDialog
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
