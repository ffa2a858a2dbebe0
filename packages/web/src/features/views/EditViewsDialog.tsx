import {
  closestCenter,
  DndContext,
  type DragEndEvent,
  KeyboardSensor,
  PointerSensor,
  useSensor,
  useSensors,
} from '@dnd-kit/core';
import {
  arrayMove,
  SortableContext,
  sortableKeyboardCoordinates,
  useSortable,
  verticalListSortingStrategy,
} from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import DragIndicatorIcon from '@mui/icons-material/DragIndicator';
import {
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  IconButton,
  List,
  ListItem,
  TextField,
  Typography,
} from '@mui/material';
import type { View } from '@signalbox/contracts';
import { viewInput } from '@signalbox/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { translateResourceMessage } from '../../components/messages';
import { ErrorAlert, useResourceNotify } from '../../components/ui';
import { useViewMutations } from '../templates';

/** The edit-views dialog: drag (or keyboard) reordering, rename, add, delete, and the "No views" state. */
export function EditViewsDialog({
  projectId,
  views,
  onClose,
}: {
  projectId: number;
  views: View[];
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const m = useViewMutations(projectId);
  const [order, setOrder] = useState(views);
  const [title, setTitle] = useState('');
  const [titleError, setTitleError] = useState('');
  useEffect(() => setOrder(views), [views]);
  const sensors = useSensors(
    useSensor(PointerSensor),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );

  const onDragEnd = (e: DragEndEvent) => {
    const { active, over } = e;
    if (!over || active.id === over.id) return;
    const from = order.findIndex((v) => v.id === active.id);
    const to = order.findIndex((v) => v.id === over.id);
    const next = arrayMove(order, from, to);
    setOrder(next);
    m.positions.mutate(
      next.map((v) => v.id),
      { onError: (err) => notify.error(err) },
    );
  };

  const add = async () => {
    const parsed = viewInput.safeParse({ title, position: order.length });
    if (!parsed.success) {
      setTitleError(translateResourceMessage(parsed.error.issues[0]?.message ?? '', t, 'title'));
      return;
    }
    setTitleError('');
    try {
      await m.create.mutateAsync({ title: parsed.data.title, position: order.length });
      setTitle('');
    } catch (err) {
      notify.error(err);
    }
  };

  return (
    <Dialog open onClose={onClose} fullWidth maxWidth="xs" aria-labelledby="edit-views-title">
      <DialogTitle id="edit-views-title">{t('views.editTitle')}</DialogTitle>
      <DialogContent dividers>
        <ErrorAlert error={m.rename.error ?? m.remove.error} />
        {order.length === 0 ? (
          <Typography color="text.secondary" sx={{ py: 2, textAlign: 'center' }}>
            {t('views.none')}
          </Typography>
        ) : (
          <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
            <SortableContext items={order.map((v) => v.id)} strategy={verticalListSortingStrategy}>
              <List dense aria-label={t('views.listLabel')}>
                {order.map((v) => (
                  <SortableView
                    key={v.id}
                    view={v}
                    onRename={(next) => m.rename.mutate({ ...v, title: next })}
                    onDelete={() => m.remove.mutate(v.id)}
                  />
                ))}
              </List>
            </SortableContext>
          </DndContext>
        )}
        <Box
          component="form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void add();
          }}
          sx={{ display: 'flex', gap: 1, mt: 2, alignItems: 'flex-start' }}
        >
          <TextField
            size="small"
            label={t('views.newTitle')}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            error={!!titleError}
            helperText={titleError || undefined}
            sx={{ flex: 1 }}
            name="title"
          />
          <Button type="submit" variant="outlined" startIcon={<AddIcon />} disabled={m.create.isPending}>
            {t('views.add')}
          </Button>
        </Box>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{t('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
}

function SortableView({
  view,
  onRename,
  onDelete,
}: {
  view: View;
  onRename: (title: string) => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation();
  const [title, setTitle] = useState(view.title);
  useEffect(() => setTitle(view.title), [view.title]);
  const { attributes, listeners, setNodeRef, transform, transition, isDragging } = useSortable({
    id: view.id,
  });
  const commit = () => {
    const next = title.trim();
    if (next && next !== view.title) onRename(next);
    else setTitle(view.title);
  };
  return (
    <ListItem
      ref={setNodeRef}
      data-testid={`view-row-${view.title}`}
      disableGutters
      sx={{
        transform: CSS.Transform.toString(transform),
        transition,
        gap: 1,
        opacity: isDragging ? 0.6 : 1,
        bgcolor: 'background.paper',
      }}
    >
      <IconButton
        size="small"
        aria-label={t('views.dragHandle', { name: view.title })}
        sx={{ cursor: 'grab', touchAction: 'none' }}
        {...attributes}
        {...listeners}
      >
        <DragIndicatorIcon fontSize="small" />
      </IconButton>
      <TextField
        size="small"
        variant="standard"
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            commit();
          }
        }}
        slotProps={{ htmlInput: { 'aria-label': t('views.titleOf', { name: view.title }), maxLength: 100 } }}
        sx={{ flex: 1 }}
      />
      <IconButton size="small" aria-label={t('views.deleteNamed', { name: view.title })} onClick={onDelete}>
        <DeleteIcon fontSize="small" />
      </IconButton>
    </ListItem>
  );
}
