import { Box, Chip, List, ListItemButton, ListItemText, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import type { GraphItem } from './GraphNode';
import { statusColor } from './status-colors';

/**
 * The nodes as a list, in the order they run: what a phone shows instead of the graph. Each row says what comes
 * before it; choosing one selects it (`onSelect`).
 */
export function NodeList({
  label,
  items,
  parents,
  selectedId,
  onSelect,
}: {
  label: string;
  items: GraphItem[];
  parents: (id: string) => string[];
  selectedId: string | null;
  onSelect: (id: string) => void;
}) {
  const { t } = useTranslation();
  if (items.length === 0)
    return (
      <Typography color="text.secondary" sx={{ p: 2 }}>
        {t('wf.noNodes')}
      </Typography>
    );
  return (
    <List aria-label={label} dense sx={{ border: 1, borderColor: 'divider', borderRadius: 1, py: 0 }}>
      {items.map((item) => {
        const after = parents(item.id);
        return (
          <ListItemButton
            key={item.id}
            selected={item.id === selectedId}
            onClick={() => onSelect(item.id)}
            data-node-id={item.id}
            data-status={item.status}
            sx={{ borderBottom: 1, borderColor: 'divider', gap: 1, alignItems: 'flex-start' }}
          >
            <ListItemText
              primary={item.title}
              secondary={
                <>
                  {item.detail}
                  {after.length > 0 && (
                    <Box component="span" sx={{ display: 'block' }}>
                      {t('wf.list.after', { names: after.join(', ') })}
                    </Box>
                  )}
                </>
              }
              slotProps={{ primary: { sx: { fontWeight: 600 }, color: item.invalid ? 'error' : undefined } }}
            />
            {item.statusLabel && item.status && (
              <Box sx={{ textAlign: 'right', flexShrink: 0 }}>
                <Chip
                  size="small"
                  color={statusColor[item.status]}
                  label={item.statusLabel}
                  variant={item.status === 'pending' ? 'outlined' : 'filled'}
                />
                {item.elapsed && (
                  <Typography variant="caption" component="div" color="text.secondary">
                    {item.elapsed}
                  </Typography>
                )}
              </Box>
            )}
          </ListItemButton>
        );
      })}
    </List>
  );
}
