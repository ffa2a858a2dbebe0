import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import { Button, IconButton, Table, TableBody, TableCell, TableHead, TableRow, Tooltip } from '@mui/material';
import { type AccessKey, type Repository, repositoryType } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { useDeleteFlow } from '../templates/shared/DeleteFlow';
import {
  actionsSx,
  ErrorAlert,
  PageBody,
  TableFrame,
  useResourceNotify,
  wideOnlySx,
} from '../templates/shared/ui';
import { RepositoryDialog } from './RepositoryDialog';

/** /project/{id}/repositories. */
export default function RepositoriesPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const repos = useResourceList<Repository>(project.id, 'repositories');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const remove = useResourceDelete(project.id, 'repositories');
  const [editing, setEditing] = useState<Repository | 'new' | null>(null);
  const manage = can('manageProjectResources');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'repositories',
    objectKey: 'refs.objects.repository',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (r) => notify.success(t('repos.deleted', { name: r.name })),
  });
  const list = repos.data ?? [];
  const keyName = (id: number | null) => keys.data?.find((k) => k.id === id)?.name ?? '—';

  return (
    <>
      <PageHeader
        title={t('nav.repositories')}
        actions={
          manage && (
            <Button variant="contained" startIcon={<AddIcon />} onClick={() => setEditing('new')}>
              {t('repos.new')}
            </Button>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={repos.error} />
        {repos.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('repos.empty')}>
            <Table size="small" aria-label={t('nav.repositories')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('repos.url')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('repos.branch')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('repos.accessKey')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((r) => (
                  <TableRow key={r.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{r.name}</TableCell>
                    <TableCell
                      sx={{ wordBreak: 'break-all', fontFamily: 'monospace', fontSize: 13, minWidth: 140 }}
                    >
                      {r.git_url}
                    </TableCell>
                    <TableCell sx={wideOnlySx}>
                      {repositoryType(r.git_url) === 'local' ? '—' : r.git_branch}
                    </TableCell>
                    <TableCell sx={wideOnlySx}>{keyName(r.ssh_key_id)}</TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: r.name })}
                          onClick={() => setEditing(r)}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      {manage && (
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: r.name })}
                            onClick={() => void del.start(r)}
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
        <RepositoryDialog
          projectId={project.id}
          item={editing === 'new' ? null : editing}
          keys={keys.data ?? []}
          readOnly={!manage}
          onClose={() => setEditing(null)}
        />
      )}
      {del.element}
    </>
  );
}
