import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Box,
  IconButton,
  Link,
  Paper,
  Switch,
  TableCell,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import type { Schedule } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { useResourceDelete, useResourceList, useResourceSave } from '../../api/resources';
import { useInfo } from '../../api/session';
import { Guarded } from '../../components/access';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { useEditDialog } from '../../components/edit-dialog';
import { formatDateTime } from '../../components/format';
import { Card, CardLine, CardList, usePhone } from '../../components/lists';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { NewButton, ResourceTable, RowActions } from '../../components/ResourceTable';
import { Spinner } from '../../components/states';
import { ErrorAlert, PageBody } from '../../components/ui';
import { nextRunOf } from './next-run';
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

/** A schedule's own name, else the name of the template it runs. */
const nameOf = (s: Schedule) => s.name || s.tpl_name;

/** The body of PUT schedules/{id}: the schedule as it is (its task parameters too), with `active` as given. */
const withActive = (s: Schedule, active: boolean) => ({
  id: s.id,
  template_id: s.template_id,
  type: s.type,
  cron_format: s.cron_format,
  run_at: s.run_at,
  delete_after_run: s.delete_after_run,
  repository_id: s.repository_id,
  name: s.name,
  active,
  task_params: s.task_params,
});

/** /project/{id}/schedule: name, template (link), cron or run-once time, next run, an Active switch, actions. */
export default function SchedulePage() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const phone = usePhone();
  const info = useInfo();
  const schedules = useResourceList<Schedule>(project.id, 'schedules');
  const save = useResourceSave<ReturnType<typeof withActive>>(project.id, 'schedules');
  const dialog = useEditDialog<Schedule>();
  const manage = can('manageProjectResources');
  const del = useConfirmedDelete(
    useResourceDelete(project.id, 'schedules'),
    (s: Schedule) => s.id,
    (s) => t('schedule.deleted', { name: nameOf(s) }),
  );
  const timezone = info.data?.schedule_timezone;

  const when = (s: Schedule) =>
    s.type === 'run_at' ? (
      <>
        {t('schedule.onceAt', { time: formatDateTime(s.run_at) })}
        <RunOnceState schedule={s} />
      </>
    ) : (
      <Box component="span" sx={{ fontFamily: 'monospace' }}>
        {s.cron_format}
      </Box>
    );
  const next = (s: Schedule) => {
    const at = nextRunOf(s, timezone);
    return at ? formatDateTime(at.toISOString()) : '—';
  };
  const template = (s: Schedule) => (
    <>
      <Link component={RouterLink} to={`/project/${project.id}/templates/${s.template_id}`}>
        {s.tpl_name}
      </Link>
      {s.repository_id ? ` ${t('schedule.onNewCommits')}` : ''}
    </>
  );
  const activeSwitch = (s: Schedule) => (
    <Guarded permission="manageProjectResources">
      <Switch
        size="small"
        checked={s.active}
        disabled={save.isPending && save.variables?.id === s.id}
        onChange={(e) => save.mutate(withActive(s, e.target.checked))}
        slotProps={{ input: { 'aria-label': t('scheduleList.activeNamed', { name: nameOf(s) }) } }}
      />
    </Guarded>
  );

  return (
    <>
      <PageHeader
        title={t('nav.schedule')}
        actions={manage && <NewButton label={t('schedule.new')} onClick={dialog.startNew} />}
      />
      <PageBody>
        <ErrorAlert error={save.error} />
        {phone ? (
          <>
            <ErrorAlert error={schedules.error} />
            {schedules.isPending ? (
              <Spinner full={false} />
            ) : (schedules.data ?? []).length === 0 ? (
              <Paper variant="outlined" sx={{ p: 2, color: 'text.secondary' }}>
                {t('schedule.empty')}
              </Paper>
            ) : (
              <CardList label={t('nav.schedule')}>
                {(schedules.data ?? []).map((s) => (
                  <Card key={s.id} title={nameOf(s)} aside={activeSwitch(s)}>
                    <CardLine label={t('res.template')}>{template(s)}</CardLine>
                    <CardLine label={t('schedule.when')}>{when(s)}</CardLine>
                    <CardLine label={t('scheduleList.nextRun')}>{next(s)}</CardLine>
                    {manage && (
                      <Box sx={{ display: 'flex', justifyContent: 'flex-end' }}>
                        <Tooltip title={t('res.edit')}>
                          <IconButton
                            aria-label={t('res.editNamed', { name: nameOf(s) })}
                            onClick={() => dialog.edit(s)}
                          >
                            <EditIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                        <Tooltip title={t('common.delete')}>
                          <IconButton
                            aria-label={t('res.deleteNamed', { name: nameOf(s) })}
                            onClick={() => del.ask(s)}
                          >
                            <DeleteIcon fontSize="small" />
                          </IconButton>
                        </Tooltip>
                      </Box>
                    )}
                  </Card>
                ))}
              </CardList>
            )}
          </>
        ) : (
          <ResourceTable
            label={t('nav.schedule')}
            items={schedules.data}
            error={schedules.error}
            loading={schedules.isPending}
            empty={t('schedule.empty')}
            withActions={manage}
            head={
              <>
                <TableCell>{t('fields.name')}</TableCell>
                <TableCell>{t('res.template')}</TableCell>
                <TableCell>{t('schedule.when')}</TableCell>
                <TableCell>{t('scheduleList.nextRun')}</TableCell>
                <TableCell>{t('scheduleList.active')}</TableCell>
              </>
            }
          >
            {(s) => (
              <TableRow key={s.id} hover data-schedule={s.id}>
                <TableCell sx={{ wordBreak: 'break-word' }}>{nameOf(s)}</TableCell>
                <TableCell sx={{ wordBreak: 'break-word' }}>{template(s)}</TableCell>
                <TableCell>{when(s)}</TableCell>
                <TableCell data-testid="next-run">{next(s)}</TableCell>
                <TableCell>{activeSwitch(s)}</TableCell>
                {manage && (
                  <RowActions name={nameOf(s)} onEdit={() => dialog.edit(s)} onDelete={() => del.ask(s)} />
                )}
              </TableRow>
            )}
          </ResourceTable>
        )}
      </PageBody>
      {dialog.open && <ScheduleDialog projectId={project.id} item={dialog.item} onClose={dialog.close} />}
      <ConfirmDialog
        title={t('schedule.delete')}
        text={t('refs.deleteConfirm', { name: del.target ? nameOf(del.target) : '' })}
        {...del.dialogProps}
      />
    </>
  );
}
