import { TableCell, TableRow } from '@mui/material';
import type { OptionList } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { useEditDialog } from '../../components/edit-dialog';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody } from '../../components/ui';
import { OptionListDialog } from './OptionListDialog';

/** /project/{id}/option_lists: the project's named lists of options, which surveys may offer. */
export default function OptionListsPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const lists = useResourceList<OptionList>(project.id, 'option_lists');
  const dialog = useEditDialog<OptionList>();
  const manage = can('manageProjectResources');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'option_lists',
    objectKey: 'refs.objects.optionList',
    deletedKey: 'optionLists.deleted',
  });

  return (
    <>
      <PageHeader
        title={t('nav.optionLists')}
        actions={manage && <NewButton label={t('optionLists.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.optionLists')}
          items={lists.data}
          error={lists.error}
          loading={lists.isPending}
          empty={t('optionLists.empty')}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('optionLists.entries')}</TableCell>
            </>
          }
        >
          {(list) => (
            <TableRow key={list.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>{list.name}</TableCell>
              <TableCell>{list.options.length}</TableCell>
              <RowActions
                name={list.name}
                onEdit={() => dialog.edit(list)}
                readOnly={!manage}
                onDelete={manage ? () => void del.start(list) : undefined}
              />
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      {dialog.open && (
        <OptionListDialog
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
