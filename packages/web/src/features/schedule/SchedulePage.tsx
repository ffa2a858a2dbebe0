import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Button,
  IconButton,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
} from '@mui/material';
import type { Schedule } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { ConfirmDialog } from '../../app/ConfirmDialog';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { actionsSx, ErrorAlert, PageBody, TableFrame, useResourceNotify } from '../templates/shared/ui';
import { ScheduleDialog } from './ScheduleDialog';

/** /project/{id}/schedule: template name (link), cron, actions. */
export default function SchedulePage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const schedules = useResourceList<Schedule>(project.id, 'schedules');
  const remove = useResourceDelete(project.id, 'schedules');
  const [editing, setEditing] = useState<Schedule | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const manage = can('manageProjectResources');
  const list = schedules.data ?? [];

  const confirmDelete = async () => {
    if (!deleting) return;
    try {
      await remove.mutateAsync(deleting.id);
      notify.success(t('schedule.deleted', { name: deleting.tpl_name }));
      setDeleting(null);
    } catch {
      // Shown in the dialog.
    }
  };

  return (
    <>
      <PageHeader
        title={t('nav.schedule')}
        actions={
          manage && (
            <Button variant="contained" startIcon={<AddIcon />} onClick={() => setEditing('new')}>
              {t('schedule.new')}
            </Button>
          )
        }
      />
      <PageBody>
        <ErrorAlert error={schedules.error} />
        {schedules.isPending ? (
          <Spinner full={false} />
        ) : (
          <TableFrame empty={list.length === 0 && t('schedule.empty')}>
            <Table size="small" aria-label={t('nav.schedule')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.template')}</TableCell>
                  <TableCell>{t('schedule.cron')}</TableCell>
                  {manage && (
                    <TableCell align="right" sx={actionsSx}>
                      {t('common.actions')}
                    </TableCell>
                  )}
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((s) => (
                  <TableRow key={s.id} hover>
                    <TableCell sx={{ wordBreak: 'break-word' }}>
                      <Link component={RouterLink} to={`/project/${project.id}/templates/${s.template_id}`}>
                        {s.tpl_name}
                      </Link>
                      {s.repository_id ? ` ${t('schedule.onNewCommits')}` : ''}
                    </TableCell>
                    <TableCell sx={{ fontFamily: 'monospace' }}>{s.cron_format}</TableCell>
                    {manage && (
                      <TableCell align="right" sx={actionsSx}>
                        <Tooltip title={t('res.edit')}>
                          <IconButton
                            aria-label={t('res.editNamed', { name: s.tpl_name })}
                            onClick={() => setEditing(s)}
                          >
                            <EditIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: s.tpl_name })}
                            onClick={() => {
                              remove.reset();
                              setDeleting(s);
                            }}
                          >
                            <DeleteIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      </TableCell>
                    )}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
        )}
      </PageBody>
      {editing && (
        <ScheduleDialog
          projectId={project.id}
          item={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
        />
      )}
      <ConfirmDialog
        open={!!deleting}
        title={t('schedule.delete')}
        text={t('refs.deleteConfirm', { name: deleting?.tpl_name ?? '' })}
        pending={remove.isPending}
        error={remove.error}
        onConfirm={() => void confirmDelete()}
        onClose={() => setDeleting(null)}
      />
    </>
  );
}
