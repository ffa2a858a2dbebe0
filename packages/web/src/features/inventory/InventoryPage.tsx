import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import {
  Button,
  IconButton,
  ListItemText,
  Menu,
  MenuItem,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
} from '@mui/material';
import { type AccessKey, type Inventory, isWorkspaceInventory, type Repository } from '@signalbox/contracts';
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
import { InventoryDialog, type InventoryKind } from './InventoryDialog';

const kinds: InventoryKind[] = ['generic', 'terraform', 'tofu'];

const kindOf = (inv: Inventory): InventoryKind =>
  inv.type === 'terraform-workspace' ? 'terraform' : inv.type === 'tofu-workspace' ? 'tofu' : 'generic';

/** /project/{id}/inventory: the New Inventory menu offers generic, terraform and tofu kinds. */
export default function InventoryPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const repos = useResourceList<Repository>(project.id, 'repositories');
  const remove = useResourceDelete(project.id, 'inventory');
  const [menu, setMenu] = useState<HTMLElement | null>(null);
  const [editing, setEditing] = useState<{ kind: InventoryKind; item: Inventory | null } | null>(null);
  const manage = can('manageProjectResources');
  const del = useDeleteFlow({
    projectId: project.id,
    collection: 'inventory',
    objectKey: 'refs.objects.inventory',
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (i) => notify.success(t('inventory.deleted', { name: i.name })),
  });
  const list = inventories.data ?? [];
  const keyName = (id: number | null) => keys.data?.find((k) => k.id === id)?.name ?? '—';

  return (
    <>
      <PageHeader
        title={t('nav.inventory')}
        actions={
          manage && (
            <>
              <Button
                variant="contained"
                startIcon={<AddIcon />}
                endIcon={<ExpandMoreIcon />}
                aria-haspopup="menu"
                aria-expanded={!!menu}
                aria-controls={menu ? 'new-inventory-menu' : undefined}
                onClick={(e) => setMenu(e.currentTarget)}
              >
                {t('inventory.new')}
              </Button>
              <Menu id="new-inventory-menu" anchorEl={menu} open={!!menu} onClose={() => setMenu(null)}>
                {kinds.map((kind) => (
                  <MenuItem
                    key={kind}
                    onClick={() => {
                      setMenu(null);
                      setEditing({ kind, item: null });
                    }}
                  >
                    <ListItemText primary={t(`inventory.kinds.${kind}`)} />
                  </MenuItem>
                ))}
              </Menu>
            </>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={inventories.error} />
        {inventories.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('inventory.empty')}>
            <Table size="small" aria-label={t('nav.inventory')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('res.type')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('inventory.userCredentials')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((inv) => (
                  <TableRow key={inv.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{inv.name}</TableCell>
                    <TableCell>{t(`inventory.types.${inv.type}`)}</TableCell>
                    <TableCell sx={wideOnlySx}>
                      {isWorkspaceInventory(inv.type) ? '—' : keyName(inv.ssh_key_id)}
                    </TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: inv.name })}
                          onClick={() => setEditing({ kind: kindOf(inv), item: inv })}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      {manage && (
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: inv.name })}
                            onClick={() => void del.start(inv)}
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
        <InventoryDialog
          projectId={project.id}
          kind={editing.kind}
          item={editing.item}
          keys={keys.data ?? []}
          repositories={repos.data ?? []}
          readOnly={!manage}
          onClose={() => setEditing(null)}
        />
      )}
      {del.element}
    </>
  );
}
