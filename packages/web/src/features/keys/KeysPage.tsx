import { Alert, Chip, TableCell, TableRow, Typography } from '@mui/material';
import type { AccessKey } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { useEditDialog } from '../../components/edit-dialog';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody } from '../../components/ui';
import { KeyDialog } from './KeyDialog';

/** A key whose type needs a password or private key it does not have (restored from a backup, say). */
const lacksSecret = (k: AccessKey) => k.type !== 'none' && k.has_secret === false;

/** /project/{id}/keys: the key store: a full-page table with an edit dialog. */
export default function KeysPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const dialog = useEditDialog<AccessKey>();
  const manage = can('manageProjectResources');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'keys',
    objectKey: 'refs.objects.key',
    deletedKey: 'keyStore.deleted',
  });

  const withoutSecret = (keys.data ?? []).filter(lacksSecret);

  return (
    <>
      <PageHeader
        title={t('nav.keys')}
        actions={manage && <NewButton label={t('keyStore.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        {withoutSecret.length > 0 && (
          <Alert severity="warning" sx={{ mb: 2 }} data-keys-without-secret>
            {t('keyStore.noSecretsAlert')}
          </Alert>
        )}
        <ResourceTable
          label={t('nav.keys')}
          items={keys.data}
          error={keys.error}
          loading={keys.isPending}
          empty={t('keyStore.empty')}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('res.type')}</TableCell>
            </>
          }
        >
          {(k) => (
            <TableRow key={k.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>{k.name}</TableCell>
              <TableCell>
                {t(`keyStore.types.${k.type}`)}
                {lacksSecret(k) && (
                  <Chip
                    size="small"
                    color="warning"
                    variant="outlined"
                    label={t('keyStore.noSecretShort')}
                    sx={{ ml: 1 }}
                  />
                )}
                {k.source_storage_type && (
                  <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
                    {t(`keyStore.readOn.${k.source_storage_type}`, { name: k.source_storage_key ?? '' })}
                  </Typography>
                )}
              </TableCell>
              <RowActions
                name={k.name}
                onEdit={() => dialog.edit(k)}
                readOnly={!manage}
                onDelete={manage ? () => void del.start(k) : undefined}
              />
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      {dialog.open && (
        <KeyDialog projectId={project.id} item={dialog.item} readOnly={!manage} onClose={dialog.close} />
      )}
      {del.element}
    </>
  );
}
