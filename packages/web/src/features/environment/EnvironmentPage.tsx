import { TableCell, TableRow } from '@mui/material';
import type { Environment } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { useEditDialog } from '../../components/edit-dialog';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody } from '../../components/ui';
import { EnvironmentDialog } from './EnvironmentDialog';

/** /project/{id}/environment. */
export default function EnvironmentPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const envs = useResourceList<Environment>(project.id, 'environment');
  const dialog = useEditDialog<Environment>();
  const manage = can('manageProjectResources');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'environment',
    objectKey: 'refs.objects.environment',
    deletedKey: 'environment.deleted',
  });

  return (
    <>
      <PageHeader
        title={t('nav.environment')}
        actions={manage && <NewButton label={t('environment.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.environment')}
          items={envs.data}
          error={envs.error}
          loading={envs.isPending}
          empty={t('environment.empty')}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('environment.secrets')}</TableCell>
            </>
          }
        >
          {(env) => (
            <TableRow key={env.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>{env.name}</TableCell>
              <TableCell>{env.secrets?.length ?? 0}</TableCell>
              <RowActions
                name={env.name}
                onEdit={() => dialog.edit(env)}
                readOnly={!manage}
                onDelete={manage ? () => void del.start(env) : undefined}
              />
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      {dialog.open && (
        <EnvironmentDialog
          projectId={project.id}
          item={dialog.item}
          readOnly={!manage}
          onClose={dialog.close}
        />
      )}
      {del.element}
    </>
  );
}
