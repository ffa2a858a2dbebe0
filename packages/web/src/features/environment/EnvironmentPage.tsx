import { TableCell, TableRow } from '@mui/material';
import type { Environment } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useEditDialog } from '../../app/edit-dialog';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { useResourceList } from '../templates/shared/api';
import { useResourceDeleteFlow } from '../templates/shared/DeleteFlow';
import { NewButton, ResourceTable, RowActions } from '../templates/shared/ResourceTable';
import { PageBody } from '../templates/shared/ui';
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
