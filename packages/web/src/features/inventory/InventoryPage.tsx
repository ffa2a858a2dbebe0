import AddIcon from '@mui/icons-material/Add';
import ExpandMoreIcon from '@mui/icons-material/ExpandMore';
import { Button, ListItemText, Menu, MenuItem, TableCell, TableRow } from '@mui/material';
import { type AccessKey, type Inventory, isWorkspaceInventory, type Repository } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../api/resources';
import { useResourceDeleteFlow } from '../../components/DeleteFlow';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { ResourceTable, RowActions } from '../../components/ResourceTable';
import { PageBody, wideOnlySx } from '../../components/ui';
import { InventoryDialog, type InventoryKind } from './InventoryDialog';

const kinds: InventoryKind[] = ['generic', 'terraform', 'tofu', 'terragrunt'];

const workspaceKinds: Record<string, InventoryKind> = {
  'terraform-workspace': 'terraform',
  'tofu-workspace': 'tofu',
  'terragrunt-workspace': 'terragrunt',
};
const kindOf = (inv: Inventory): InventoryKind => workspaceKinds[inv.type] ?? 'generic';

/** /project/{id}/inventory: the New Inventory menu offers generic, terraform, tofu and terragrunt kinds. */
export default function InventoryPage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const keys = useResourceList<AccessKey>(project.id, 'keys');
  const repos = useResourceList<Repository>(project.id, 'repositories');
  const [menu, setMenu] = useState<HTMLElement | null>(null);
  const [editing, setEditing] = useState<{ kind: InventoryKind; item: Inventory | null } | null>(null);
  const manage = can('manageProjectResources');
  const del = useResourceDeleteFlow({
    projectId: project.id,
    collection: 'inventory',
    objectKey: 'refs.objects.inventory',
    deletedKey: 'inventory.deleted',
  });
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
        <ResourceTable
          label={t('nav.inventory')}
          items={inventories.data}
          error={inventories.error}
          loading={inventories.isPending}
          empty={t('inventory.empty')}
          head={
            <>
              <TableCell>{t('res.name')}</TableCell>
              <TableCell>{t('res.type')}</TableCell>
              <TableCell sx={wideOnlySx}>{t('inventory.userCredentials')}</TableCell>
            </>
          }
        >
          {(inv) => (
            <TableRow key={inv.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>{inv.name}</TableCell>
              <TableCell>{t(`inventory.types.${inv.type}`)}</TableCell>
              <TableCell sx={wideOnlySx}>
                {isWorkspaceInventory(inv.type) ? '—' : keyName(inv.ssh_key_id)}
              </TableCell>
              <RowActions
                name={inv.name}
                onEdit={() => setEditing({ kind: kindOf(inv), item: inv })}
                readOnly={!manage}
                onDelete={manage ? () => void del.start(inv) : undefined}
              />
            </TableRow>
          )}
        </ResourceTable>
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
