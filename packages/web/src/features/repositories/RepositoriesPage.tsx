import { TableCell, TableRow } from '@mui/material';
import { type AccessKey, type Repository, repositoryType } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { useEditDialog } from '../../components/edit-dialog';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody, wideOnlySx } from '../../components/ui';
import { RepositoryDialog } from './RepositoryDialog';

/** /project/{id}/repositories. */
export default function RepositoriesPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const repos = useResourceList<Repository>(project.id, 'repositories');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const dialog = useEditDialog<Repository>();
  const manage = can('manageProjectResources');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'repositories',
    objectKey: 'refs.objects.repository',
    deletedKey: 'repos.deleted',
  });
  const keyName = (id: number | null) => keys.data?.find((k) => k.id === id)?.name ?? '—';

  return (
    <>
      <PageHeader
        title={t('nav.repositories')}
        actions={manage && <NewButton label={t('repos.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.repositories')}
          items={repos.data}
          error={repos.error}
          loading={repos.isPending}
          empty={t('repos.empty')}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('repos.url')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('repos.branch')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('repos.accessKey')}</TableCell>
            </>
          }
        >
          {(r) => (
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
              <RowActions
                name={r.name}
                onEdit={() => dialog.edit(r)}
                readOnly={!manage}
                onDelete={manage ? () => void del.start(r) : undefined}
              />
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      {dialog.open && (
        <RepositoryDialog
          projectId={project.id}
          item={dialog.item}
          keys={keys.data ?? []}
          readOnly={!manage}
          onClose={dialog.close}
        />
      )}
      {del.element}
    </>
  );
}
