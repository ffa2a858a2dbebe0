import { Link, TableCell, TableRow, Typography } from '@mui/material';
import type { Schedule } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { ConfirmDialog, useConfirmedDelete } from '../../app/ConfirmDialog';
import { useEditDialog } from '../../app/edit-dialog';
import { formatDateTime } from '../../app/format';
import { PageHeader } from '../../app/PageHeader';
import { useProjectContext } from '../../app/project-context';
import { useResourceDelete, useResourceList } from '../templates/shared/api';
import { NewButton, ResourceTable, RowActions } from '../templates/shared/ResourceTable';
import { PageBody } from '../templates/shared/ui';
import { ScheduleDialog } from './ScheduleDialog';

/** What a run-once schedule has done: still to run, ran (when), missed, or switched off. */
function RunOnceState({ schedule }: { schedule: Schedule }) {
  const { t } = useTranslation();
  const text = schedule.active
    ? t('schedule.state.pending')
    : schedule.last_run_at
      ? t('schedule.state.ran', { time: formatDateTime(schedule.last_run_at) })
      : schedule.run_missed
        ? t('schedule.state.missed')
        : t('schedule.state.disabled');
  return (
    <Typography variant="body2" color={schedule.run_missed ? 'warning.main' : 'text.secondary'}>
      {text}
    </Typography>
  );
}

/** /project/{id}/schedule: template name (link), cron or run-once time (in the user's locale), actions. */
export default function SchedulePage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const schedules = useResourceList<Schedule>(project.id, 'schedules');
  const dialog = useEditDialog<Schedule>();
  const manage = can('manageProjectResources');
  const del = useConfirmedDelete(
    useResourceDelete(project.id, 'schedules'),
    (s: Schedule) => s.id,
    (s) => t('schedule.deleted', { name: s.tpl_name }),
  );

  return (
    <>
      <PageHeader
        title={t('nav.schedule')}
        actions={manage && <NewButton label={t('schedule.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ResourceTable
          label={t('nav.schedule')}
          items={schedules.data}
          error={schedules.error}
          loading={schedules.isPending}
          empty={t('schedule.empty')}
          withActions={manage}
          head={
            <>
              <TableCell>{t('res.template')}</TableCell>
              <TableCell>{t('schedule.when')}</TableCell>
            </>
          }
        >
          {(s) => (
            <TableRow key={s.id} hover>
              <TableCell sx={{ wordBreak: 'break-word' }}>
                <Link component={RouterLink} to={`/project/${project.id}/templates/${s.template_id}`}>
                  {s.tpl_name}
                </Link>
                {s.repository_id ? ` ${t('schedule.onNewCommits')}` : ''}
              </TableCell>
              {s.type === 'run_at' ? (
                <TableCell>
                  {t('schedule.onceAt', { time: formatDateTime(s.run_at) })}
                  <RunOnceState schedule={s} />
                </TableCell>
              ) : (
                <TableCell sx={{ fontFamily: 'monospace' }}>{s.cron_format}</TableCell>
              )}
              {manage && (
                <RowActions name={s.tpl_name} onEdit={() => dialog.edit(s)} onDelete={() => del.ask(s)} />
              )}
            </TableRow>
          )}
        </ResourceTable>
      </PageBody>
      {dialog.open && <ScheduleDialog projectId={project.id} item={dialog.item} onClose={dialog.close} />}
      <ConfirmDialog
        title={t('schedule.delete')}
        text={t('refs.deleteConfirm', { name: del.target?.tpl_name ?? '' })}
        {...del.dialogProps}
      />
    </>
  );
}
