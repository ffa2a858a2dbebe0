import DownloadIcon from '@mui/icons-material/Download';
import {
  Box,
  Button,
  Chip,
  MenuItem,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
  useMediaQuery,
} from '@mui/material';
import { type EventView, eventObjectTypes } from '@signalbox/contracts';
import { useInfiniteQuery } from '@tanstack/react-query';
import type { TFunction } from 'i18next';
import { type ReactNode, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { api, apiUrl } from '../../api/client';
import { useProjects } from '../../api/session';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { Spinner } from '../../components/states';
import { eventActor, eventText } from './eventText';
import { type ActivityFilters, exportPath, filterQuery, noFilters, pagePath, rangeIsReversed } from './query';

/** Events per page; "Load more" asks for the next one. */
const PAGE_SIZE = 50;

/** `value`, once it has stopped changing for `ms` (typing in a filter asks the server once, not per key). */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** "Template #3": the kind of object (translated when known) and its id. */
function objectLabel(event: EventView, t: TFunction) {
  const known = (eventObjectTypes as readonly string[]).includes(event.object_type);
  const kind = known ? t(`activity.types.${event.object_type}`) : event.object_type || '—';
  return event.object_id === null ? kind : `${kind} #${event.object_id}`;
}

type Scope = { projectId: number } | { global: true };

/**
 * The activity log: filters (date range, user, object type, text; the project on the global log), the events
 * newest first in pages of 50 (a table, cards at phone width), and exports of everything the filters match.
 */
export function EventLog({ scope }: { scope: Scope }) {
  const { t, i18n } = useTranslation();
  const describe = (e: EventView) => eventText(e, t, (key) => i18n.exists(key));
  const global = 'global' in scope;
  const base = global ? '' : `/project/${scope.projectId}`;
  const phone = useMediaQuery('(max-width:600px)', { noSsr: true });
  const [filters, setFilters] = useState<ActivityFilters>(noFilters);
  const settled = useSettled(filters, 300);
  const reversed = rangeIsReversed(settled);
  const query = useMemo(() => filterQuery(settled), [settled]);
  // An export takes the filters as they read now, even if the list has not caught up with the last keystroke.
  const exportQuery = useMemo(() => filterQuery(filters), [filters]);
  const projects = useProjects();
  const set = (key: keyof ActivityFilters) => (e: { target: { value: string } }) =>
    setFilters((f) => ({ ...f, [key]: e.target.value }));

  const pages = useInfiniteQuery({
    queryKey: global
      ? ['events', query.toString()]
      : ['project', scope.projectId, 'events', query.toString()],
    queryFn: ({ pageParam, signal }) =>
      api<EventView[]>(pagePath(base, query, PAGE_SIZE, pageParam || undefined), { signal }),
    initialPageParam: 0,
    getNextPageParam: (last) => (last.length === PAGE_SIZE ? last[last.length - 1]?.id : undefined),
    enabled: !reversed,
    // A list the filters have left is dropped: coming back to it (Clear filters) starts again at its first page,
    // not at however many pages were loaded before.
    gcTime: 0,
  });
  const events = pages.data?.pages.flat() ?? [];
  const filtered = query.toString() !== '';
  const label = global ? t('activity.globalTitle') : t('dashboard.activity');

  const filterBar = (
    <Paper variant="outlined" sx={{ p: 2 }}>
      <Box
        role="search"
        aria-label={t('activity.filters')}
        sx={{
          display: 'grid',
          gap: 2,
          gridTemplateColumns: {
            xs: 'repeat(2, minmax(0, 1fr))',
            // The dates keep room for a whole date, the text search for its label.
            md: `repeat(2, minmax(170px, 1fr)) repeat(${global ? 3 : 2}, minmax(0, 1fr)) minmax(0, 1.5fr)`,
          },
        }}
      >
        <TextField
          label={t('activity.from')}
          type="date"
          size="small"
          value={filters.from}
          onChange={set('from')}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField
          label={t('activity.to')}
          type="date"
          size="small"
          value={filters.to}
          onChange={set('to')}
          error={reversed}
          helperText={reversed ? t('activity.toBeforeFrom') : undefined}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField label={t('activity.user')} size="small" value={filters.user} onChange={set('user')} />
        <TextField
          select
          label={t('activity.objectType')}
          size="small"
          value={filters.objectType}
          onChange={set('objectType')}
        >
          <MenuItem value="">{t('activity.allTypes')}</MenuItem>
          {eventObjectTypes.map((type) => (
            <MenuItem key={type} value={type}>
              {t(`activity.types.${type}`)}
            </MenuItem>
          ))}
        </TextField>
        {global && (
          <TextField
            select
            label={t('activity.project')}
            size="small"
            value={filters.projectId}
            onChange={set('projectId')}
          >
            <MenuItem value="">{t('activity.allProjects')}</MenuItem>
            {(projects.data ?? []).map((p) => (
              <MenuItem key={p.id} value={String(p.id)}>
                {p.name}
              </MenuItem>
            ))}
          </TextField>
        )}
        <TextField
          label={t('activity.search')}
          type="search"
          size="small"
          value={filters.q}
          onChange={set('q')}
          sx={{ gridColumn: { xs: '1 / -1', md: 'auto' } }}
        />
      </Box>
      <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', gap: 1, mt: 2 }}>
        <Typography variant="body2" color="text.secondary" sx={{ flex: '1 1 auto' }} aria-live="polite">
          {pages.isSuccess && t('activity.shown', { count: events.length })}
        </Typography>
        {filtered && (
          <Button size="small" onClick={() => setFilters(noFilters)}>
            {t('activity.clearFilters')}
          </Button>
        )}
        {/* On a phone the exports take a row of their own. */}
        <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1, flexBasis: { xs: '100%', sm: 'auto' } }}>
          {(['csv', 'json'] as const).map((format) => (
            <Button
              key={format}
              size="small"
              variant="outlined"
              startIcon={<DownloadIcon />}
              component="a"
              href={apiUrl(exportPath(base, exportQuery, format))}
              download
              disabled={rangeIsReversed(filters)}
            >
              {format === 'csv' ? t('activity.exportCsv') : t('activity.exportJson')}
            </Button>
          ))}
        </Box>
      </Box>
    </Paper>
  );

  let list: ReactNode;
  if (reversed) list = null;
  else if (pages.isPending) list = <Spinner full={false} />;
  else if (pages.error && events.length === 0) list = <FormError error={pages.error} />;
  else if (events.length === 0)
    list = (
      <Paper variant="outlined">
        <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
          {filtered ? t('activity.noMatch') : global ? t('activity.globalEmpty') : t('activity.empty')}
        </Typography>
      </Paper>
    );
  else if (phone)
    list = (
      <Stack component="ul" aria-label={label} spacing={1} sx={{ listStyle: 'none', m: 0, p: 0 }}>
        {events.map((e) => (
          <Paper component="li" key={e.id} variant="outlined" sx={{ p: 1.5 }}>
            <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
              <Chip size="small" label={objectLabel(e, t)} />
              <Typography variant="caption" color="text.secondary" sx={{ ml: 'auto' }}>
                {formatDateTime(e.created)}
              </Typography>
            </Box>
            <Typography variant="body2" sx={{ mt: 1, wordBreak: 'break-word', whiteSpace: 'pre-line' }}>
              {describe(e)}
            </Typography>
            <Typography variant="caption" color="text.secondary" component="p" sx={{ mt: 0.5 }}>
              {global && e.project_name ? `${eventActor(e, t)} · ${e.project_name}` : eventActor(e, t)}
            </Typography>
          </Paper>
        ))}
      </Stack>
    );
  else
    list = (
      <Paper variant="outlined">
        <TableContainer>
          <Table size="small" aria-label={label}>
            <TableHead>
              <TableRow>
                <TableCell sx={{ width: 200 }}>{t('activity.time')}</TableCell>
                <TableCell sx={{ width: 180 }}>{t('activity.user')}</TableCell>
                {global && <TableCell sx={{ width: 180 }}>{t('activity.project')}</TableCell>}
                <TableCell sx={{ width: 170 }}>{t('activity.object')}</TableCell>
                <TableCell>{t('activity.description')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {events.map((e) => (
                <TableRow key={e.id} hover>
                  <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(e.created)}</TableCell>
                  <TableCell sx={{ wordBreak: 'break-word' }}>{eventActor(e, t)}</TableCell>
                  {global && <TableCell sx={{ wordBreak: 'break-word' }}>{e.project_name ?? '—'}</TableCell>}
                  <TableCell sx={{ whiteSpace: 'nowrap' }}>{objectLabel(e, t)}</TableCell>
                  <TableCell sx={{ wordBreak: 'break-word', whiteSpace: 'pre-line' }}>
                    {describe(e)}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      </Paper>
    );

  return (
    <Stack spacing={2}>
      {filterBar}
      {list}
      {pages.error && events.length > 0 && <FormError error={pages.error} />}
      {pages.hasNextPage && !reversed && (
        <Box sx={{ textAlign: 'center' }}>
          <Button
            variant="outlined"
            onClick={() => void pages.fetchNextPage()}
            disabled={pages.isFetchingNextPage}
          >
            {t('activity.loadMore')}
          </Button>
        </Box>
      )}
    </Stack>
  );
}
