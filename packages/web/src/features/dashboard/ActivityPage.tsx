import {
  Paper,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client';
import { formatDateTime } from '../../app/format';
import { FormError } from '../../app/forms';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';

type EventRow = {
  id: number;
  created: string;
  username: string | null;
  user_name: string | null;
  description: string;
};

/** Dashboard Activity: the project's event log (time, user, description). */
export default function ActivityPage() {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const events = useQuery({
    queryKey: ['project', project.id, 'events'],
    queryFn: () => api<EventRow[]>(`/project/${project.id}/events/last`),
  });
  if (events.isPending) return <Spinner full={false} />;
  if (events.error) return <FormError error={events.error} />;
  const rows = events.data ?? [];
  return (
    <Paper variant="outlined">
      <TableContainer>
        <Table size="small" aria-label={t('dashboard.activity')}>
          <TableHead>
            <TableRow>
              <TableCell sx={{ width: 220 }}>{t('activity.time')}</TableCell>
              <TableCell sx={{ width: 200 }}>{t('activity.user')}</TableCell>
              <TableCell>{t('activity.description')}</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {rows.map((e) => (
              <TableRow key={e.id} hover>
                <TableCell sx={{ whiteSpace: 'nowrap' }}>{formatDateTime(e.created)}</TableCell>
                <TableCell>{e.user_name ?? e.username ?? '—'}</TableCell>
                <TableCell sx={{ wordBreak: 'break-word' }}>{e.description}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
      {rows.length === 0 && (
        <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
          {t('activity.empty')}
        </Typography>
      )}
    </Paper>
  );
}
