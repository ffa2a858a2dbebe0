import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import VisibilityIcon from '@mui/icons-material/VisibilityOutlined';
import { Button, IconButton, Table, TableBody, TableCell, TableHead, TableRow, Tooltip } from '@mui/material';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { Spinner } from './states';
import { actionsSx, ErrorAlert, TableFrame } from './ui';

/**
 * A resource list as a table: its load error above, a spinner while `loading`, the empty text when there are
 * no rows, and an Actions column heading after `head` when `withActions`.
 */
export function ResourceTable<T>({
  label,
  items,
  error,
  loading = false,
  empty,
  head,
  withActions = true,
  children,
}: {
  label: string;
  items: T[] | undefined;
  error: unknown;
  loading?: boolean;
  empty: string;
  head: ReactNode;
  withActions?: boolean;
  children: (item: T) => ReactNode;
}) {
  const { t } = useTranslation();
  const list = items ?? [];
  return (
    <>
      <ErrorAlert error={error} />
      {loading ? (
        <Spinner full={false} />
      ) : (
        <TableFrame empty={list.length === 0 && empty}>
          <Table size="small" aria-label={label}>
            <TableHead>
              <TableRow>
                {head}
                {withActions && (
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                )}
              </TableRow>
            </TableHead>
            <TableBody>{list.map(children)}</TableBody>
          </Table>
        </TableFrame>
      )}
    </>
  );
}

/**
 * A row's Actions cell: edit, and delete when `onDelete` is given, each labelled with the row's name. When the
 * role may only look (`readOnly`), the edit pencil becomes View, which opens the same dialog read-only.
 */
export function RowActions({
  name,
  onEdit,
  onDelete,
  readOnly = false,
}: {
  name: string;
  onEdit: () => void;
  onDelete?: () => void;
  readOnly?: boolean;
}) {
  const { t } = useTranslation();
  return (
    <TableCell align="right" sx={actionsSx}>
      <Tooltip title={readOnly ? t('access.view') : t('res.edit')}>
        <IconButton
          aria-label={t(readOnly ? 'access.viewNamed' : 'res.editNamed', { name })}
          onClick={onEdit}
        >
          {readOnly ? <VisibilityIcon fontSize="small" /> : <EditIcon fontSize="small" />}
        </IconButton>
      </Tooltip>
      {onDelete && (
        <Tooltip title={t('common.delete')}>
          <IconButton aria-label={t('res.deleteNamed', { name })} onClick={onDelete}>
            <DeleteIcon fontSize="small" />
          </IconButton>
        </Tooltip>
      )}
    </TableCell>
  );
}

/** The page header's button that opens the dialog for a new item. */
export function NewButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <Button variant="contained" startIcon={<AddIcon />} onClick={onClick}>
      {label}
    </Button>
  );
}
