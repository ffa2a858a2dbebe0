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
import EditIcon from '@mui/icons-material/Edit';
import { Box, Button, Chip, IconButton, List, ListItem, ListItemText, Typography } from '@mui/material';
import { emptySurveyVar, type SurveyVar } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { SurveyPreview } from './survey/SurveyPreview';
import { SurveyTransfer } from './survey/SurveyTransfer';
import { SurveyVarDialog } from './survey/SurveyVarDialog';

/** Sortable ids of the variables: their names, a repeated name numbered (names are unique in a saved survey). */
function rowIds(vars: SurveyVar[]): string[] {
  const seen = new Map<string, number>();
  return vars.map((v) => {
    const n = (seen.get(v.name) ?? 0) + 1;
    seen.set(v.name, n);
    return n === 1 ? v.name : `${v.name}#${n}`;
  });
}

/**
 * The survey variables of a template: a list with add, edit, remove, reordering (drag, or the keyboard on a row's
 * handle: Space, arrows, Space), JSON import and export, and a preview of the run form.
 */
export function SurveyEditor({
  projectId,
  value,
  onChange,
}: {
  projectId: number;
  value: SurveyVar[];
  onChange: (v: SurveyVar[]) => void;
}) {
  const { t } = useTranslation();
  const [editing, setEditing] = useState<{ index: number; item: SurveyVar } | null>(null);
  const sensors = useSensors(
    useSensor(PointerSensor),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const ids = rowIds(value);
  const onDragEnd = (e: DragEndEvent) => {
    const { active, over } = e;
    if (!over || active.id === over.id) return;
    onChange(arrayMove(value, ids.indexOf(String(active.id)), ids.indexOf(String(over.id))));
  };
  const nameOf = (id: string | number) => value[ids.indexOf(String(id))]?.name ?? String(id);

  return (
    <Box>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
        <Typography variant="subtitle2" component="h3" sx={{ flex: 1 }}>
          {t('survey.title')}
        </Typography>
        <SurveyTransfer vars={value} onImport={onChange} />
      </Box>
      {value.length === 0 ? (
        <Typography variant="body2" color="text.secondary" sx={{ py: 1 }}>
          {t('survey.empty')}
        </Typography>
      ) : (
        <DndContext
          sensors={sensors}
          collisionDetection={closestCenter}
          onDragEnd={onDragEnd}
          accessibility={{
            announcements: {
              onDragStart: ({ active }) => t('survey.dnd.picked', { name: nameOf(active.id) }),
              onDragOver: ({ active, over }) =>
                over
                  ? t('survey.dnd.over', {
                      name: nameOf(active.id),
                      position: ids.indexOf(String(over.id)) + 1,
                    })
                  : undefined,
              onDragEnd: ({ active, over }) =>
                over
                  ? t('survey.dnd.dropped', {
                      name: nameOf(active.id),
                      position: ids.indexOf(String(over.id)) + 1,
                    })
                  : t('survey.dnd.cancelled', { name: nameOf(active.id) }),
              onDragCancel: ({ active }) => t('survey.dnd.cancelled', { name: nameOf(active.id) }),
            },
            screenReaderInstructions: { draggable: t('survey.dnd.instructions') },
          }}
        >
          <SortableContext items={ids} strategy={verticalListSortingStrategy}>
            <List dense aria-label={t('survey.title')}>
              {value.map((v, index) => (
                <SurveyRow
                  key={ids[index]}
                  id={ids[index] as string}
                  v={v}
                  onEdit={() => setEditing({ index, item: v })}
                  onDelete={() => onChange(value.filter((_, i) => i !== index))}
                />
              ))}
            </List>
          </SortableContext>
        </DndContext>
      )}
      <Button
        size="small"
        startIcon={<AddIcon />}
        onClick={() => setEditing({ index: -1, item: { ...emptySurveyVar } })}
      >
        {t('survey.add')}
      </Button>
      <SurveyPreview vars={value} />
      {editing && (
        <SurveyVarDialog
          projectId={projectId}
          item={editing.item}
          earlier={editing.index < 0 ? value : value.slice(0, editing.index)}
          onClose={() => setEditing(null)}
          onSave={(item) => {
            onChange(
              editing.index < 0 ? [...value, item] : value.map((v, i) => (i === editing.index ? item : v)),
            );
            setEditing(null);
          }}
        />
      )}
    </Box>
  );
}

function SurveyRow({
  id,
  v,
  onEdit,
  onDelete,
}: {
  id: string;
  v: SurveyVar;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const { t } = useTranslation();
  const { attributes, listeners, setNodeRef, transform, transition, isDragging } = useSortable({ id });
  return (
    <ListItem
      ref={setNodeRef}
      disableGutters
      data-testid={`survey-row-${v.name}`}
      sx={{
        transform: CSS.Transform.toString(transform),
        transition,
        opacity: isDragging ? 0.6 : 1,
        bgcolor: 'background.paper',
        gap: 0.5,
        alignItems: 'flex-start',
      }}
    >
      <IconButton
        size="small"
        aria-label={t('survey.dragHandle', { name: v.name })}
        sx={{ cursor: 'grab', touchAction: 'none', mt: 0.5 }}
        {...attributes}
        {...listeners}
      >
        <DragIndicatorIcon fontSize="small" />
      </IconButton>
      <ListItemText
        primary={
          <>
            {v.title} <code>{v.name}</code>{' '}
            <Chip size="small" label={t(`survey.types.${v.type || 'string'}`)} />
            {v.required && (
              <Chip
                size="small"
                color="warning"
                variant="outlined"
                label={t('survey.required')}
                sx={{ ml: 0.5 }}
              />
            )}
            {v.visible_when && (
              <Chip
                size="small"
                variant="outlined"
                label={t('survey.shownIf', { field: v.visible_when.field })}
                sx={{ ml: 0.5 }}
              />
            )}
          </>
        }
        secondary={v.description || undefined}
        sx={{ wordBreak: 'break-word', minWidth: 0 }}
      />
      <Box sx={{ display: 'flex', flexShrink: 0 }}>
        <IconButton size="small" aria-label={t('res.editNamed', { name: v.name })} onClick={onEdit}>
          <EditIcon fontSize="small" />
        </IconButton>
        <IconButton size="small" aria-label={t('res.deleteNamed', { name: v.name })} onClick={onDelete}>
          <DeleteIcon fontSize="small" />
        </IconButton>
      </Box>
    </ListItem>
  );
}
