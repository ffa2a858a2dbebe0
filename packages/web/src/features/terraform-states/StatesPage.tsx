import LockIcon from '@mui/icons-material/Lock';
import LockOpenIcon from '@mui/icons-material/LockOpen';
import {
  Alert,
  Box,
  Button,
  Chip,
  Link,
  Paper,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import type { StateLock, StateSummary, StateVersion } from '@signalbox/contracts';
import { Fragment, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useSearchParams } from 'react-router';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { formatDateTime } from '../../components/format';
import { PageHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { ErrorAlert, PageBody, TableFrame, useResourceNotify, wideOnlySx } from '../../components/ui';
import { formatSize, useForceUnlock, useRollback, useStateDetail, useStates } from './api';
import { StateDiffView } from './StateDiffView';

/** A link that opens a task's log over this page (the `t` query parameter), keeping the state shown. */
function TaskLink({ id }: { id: number }) {
  const { t } = useTranslation();
  const [params] = useSearchParams();
  const next = new URLSearchParams(params);
  next.set('t', String(id));
  return (
    <Link component={RouterLink} to={{ search: `?${next}` }}>
      {t('states.task', { id })}
    </Link>
  );
}

/** Who wrote a version or took a lock: a user, a task (and the user who started it), or nobody known. */
function Writer({ user, task }: { user: string | null; task: number | null }) {
  if (!user && !task) return <>—</>;
  return (
    <>
      {user}
      {user && task ? ' · ' : ''}
      {task ? <TaskLink id={task} /> : null}
    </>
  );
}

function LockChip({ lock }: { lock: StateLock | null }) {
  const { t } = useTranslation();
  if (!lock)
    return <Chip size="small" variant="outlined" icon={<LockOpenIcon />} label={t('states.unlocked')} />;
  return (
    <Chip
      size="small"
      color="warning"
      icon={<LockIcon />}
      sx={{ maxWidth: { xs: 180, sm: 'none' } }}
      label={t('states.lockedBy', {
        who: lock.who || lock.user_name || t('states.task', { id: lock.task_id }),
      })}
    />
  );
}

/** /project/{id}/terraform_states: the built-in backend's states; one opens with its lock and versions. */
export default function StatesPage() {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const states = useStates(project.id);
  const [params, setParams] = useSearchParams();
  const selected = params.get('state');
  const open = (name: string | null) => {
    const next = new URLSearchParams(params);
    if (name) next.set('state', name);
    else next.delete('state');
    setParams(next);
  };
  const list = states.data ?? [];

  return (
    <>
      <PageHeader title={t('nav.states')} />
      <PageBody>
        <ErrorAlert error={states.error} />
        {selected ? (
          <StateDetailView name={selected} onBack={() => open(null)} />
        ) : (
          <TableFrame empty={!states.isPending && list.length === 0 && t('states.empty')}>
            <Table size="small" aria-label={t('nav.states')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell>{t('states.lock')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('states.size')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('states.serial')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('states.lastWriter')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('states.updated')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('states.versions')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((s: StateSummary) => (
                  <TableRow key={s.name} hover data-state={s.name}>
                    <TableCell sx={{ minWidth: 96, overflowWrap: 'anywhere' }}>
                      <Link component="button" onClick={() => open(s.name)} sx={{ textAlign: 'left' }}>
                        {s.name}
                      </Link>
                    </TableCell>
                    <TableCell>
                      <LockChip lock={s.lock} />
                    </TableCell>
                    <TableCell sx={wideOnlySx}>{formatSize(s.size)}</TableCell>
                    <TableCell sx={wideOnlySx}>{s.serial ?? '—'}</TableCell>
                    <TableCell sx={wideOnlySx}>
                      <Writer user={s.user_name} task={s.task_id} />
                    </TableCell>
                    <TableCell sx={wideOnlySx}>{s.updated ? formatDateTime(s.updated) : '—'}</TableCell>
                    <TableCell sx={wideOnlySx}>{s.versions}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
        )}
      </PageBody>
    </>
  );
}

function StateDetailView({ name, onBack }: { name: string; onBack: () => void }) {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const manage = can('manageProjectResources');
  const detail = useStateDetail(project.id, name);
  const rollback = useRollback(project.id);
  const unlock = useForceUnlock(project.id);
  const notify = useResourceNotify();
  const [confirmUnlock, setConfirmUnlock] = useState(false);
  const [rollbackTo, setRollbackTo] = useState<StateVersion | null>(null);
  const [diffOf, setDiffOf] = useState<number | null>(null);
  const data = detail.data;
  const lock = data?.state.lock ?? null;
  const versions = data?.versions ?? [];

  return (
    <Stack spacing={2}>
      <Box>
        <Button onClick={onBack}>{t('states.back')}</Button>
      </Box>
      <Typography variant="h6" component="h2" sx={{ wordBreak: 'break-word' }}>
        {t('states.versionsOf', { name })}
      </Typography>
      <ErrorAlert error={detail.error} />
      {data && (
        <Paper variant="outlined" sx={{ p: 2 }}>
          {lock ? (
            <Alert
              severity="warning"
              icon={<LockIcon />}
              action={
                manage && (
                  <Button color="inherit" size="small" onClick={() => setConfirmUnlock(true)}>
                    {t('states.forceUnlock')}
                  </Button>
                )
              }
            >
              <Typography variant="body2" sx={{ overflowWrap: 'anywhere' }}>
                {t('states.lockedSince', {
                  who: lock.who || lock.user_name || '—',
                  since: formatDateTime(lock.locked_at),
                })}
              </Typography>
              <Typography variant="body2" color="text.secondary" sx={{ overflowWrap: 'anywhere' }}>
                {t('states.lockDetails', { operation: lock.operation || '—', id: lock.id })}
                {lock.task_id ? (
                  <>
                    {' · '}
                    <TaskLink id={lock.task_id} />
                  </>
                ) : null}
              </Typography>
            </Alert>
          ) : (
            <Alert severity="success" icon={<LockOpenIcon />}>
              {t('states.notLocked')}
            </Alert>
          )}
        </Paper>
      )}
      {data && (
        <TableFrame empty={versions.length === 0 && t('states.noVersions')}>
          <Table size="small" aria-label={t('states.versionsOf', { name })}>
            <TableHead>
              <TableRow>
                <TableCell>{t('states.serial')}</TableCell>
                <TableCell>{t('states.written')}</TableCell>
                <TableCell sx={wideOnlySx}>{t('states.writer')}</TableCell>
                <TableCell sx={wideOnlySx}>{t('states.size')}</TableCell>
                <TableCell align="right">{t('common.actions')}</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {versions.map((v, i) => {
                const older = versions[i + 1];
                return (
                  <Fragment key={v.id}>
                    <TableRow data-version={v.id} selected={diffOf === v.id}>
                      <TableCell>
                        <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
                          <span>{v.serial}</span>
                          {v.current && <Chip size="small" color="primary" label={t('states.current')} />}
                          {v.source === 'rollback' && (
                            <Chip
                              size="small"
                              variant="outlined"
                              label={t('states.rollbackOf', { id: v.rolled_back_from })}
                            />
                          )}
                        </Stack>
                      </TableCell>
                      <TableCell>{formatDateTime(v.created)}</TableCell>
                      <TableCell sx={wideOnlySx}>
                        <Writer user={v.user_name} task={v.task_id} />
                      </TableCell>
                      <TableCell sx={wideOnlySx}>{formatSize(v.size)}</TableCell>
                      <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                        {older && (
                          <Button size="small" onClick={() => setDiffOf(diffOf === v.id ? null : v.id)}>
                            {t('states.changes')}
                          </Button>
                        )}
                        {manage && !v.current && (
                          <Button size="small" color="warning" onClick={() => setRollbackTo(v)}>
                            {t('states.rollback')}
                          </Button>
                        )}
                      </TableCell>
                    </TableRow>
                    {diffOf === v.id && older && (
                      <TableRow>
                        <TableCell colSpan={5} sx={{ bgcolor: 'action.hover' }}>
                          <StateDiffView projectId={project.id} name={name} from={older.id} to={v.id} />
                        </TableCell>
                      </TableRow>
                    )}
                  </Fragment>
                );
              })}
            </TableBody>
          </Table>
        </TableFrame>
      )}
      <ConfirmDialog
        open={confirmUnlock}
        title={t('states.forceUnlockTitle', { name })}
        text={t('states.forceUnlockConfirm', {
          id: lock?.id ?? '',
          who: lock?.who || lock?.user_name || '—',
        })}
        confirmLabel={t('states.forceUnlock')}
        pending={unlock.isPending}
        error={unlock.error}
        onClose={() => setConfirmUnlock(false)}
        onConfirm={() =>
          unlock.mutate(name, {
            onSuccess: () => {
              setConfirmUnlock(false);
              notify.success(t('states.unlockedDone', { name }));
            },
          })
        }
      />
      <ConfirmDialog
        open={rollbackTo !== null}
        title={t('states.rollbackTitle', { name })}
        text={t('states.rollbackConfirm', { serial: rollbackTo?.serial ?? 0, name })}
        confirmLabel={t('states.rollback')}
        pending={rollback.isPending}
        error={rollback.error}
        onClose={() => setRollbackTo(null)}
        onConfirm={() =>
          rollbackTo &&
          rollback.mutate(
            { name, versionId: rollbackTo.id },
            {
              onSuccess: () => {
                notify.success(t('states.rolledBack', { name, serial: rollbackTo.serial }));
                setRollbackTo(null);
              },
            },
          )
        }
      />
    </Stack>
  );
}
