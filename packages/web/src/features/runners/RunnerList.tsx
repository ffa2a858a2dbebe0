import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Box,
  Button,
  Card,
  CardContent,
  Chip,
  IconButton,
  Paper,
  Stack,
  Switch,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
  useMediaQuery,
} from '@mui/material';
import type { Runner } from '@signalbox/contracts';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ConfirmDialog, useConfirmedDelete } from '../../components/ConfirmDialog';
import { formatDateTime } from '../../components/format';
import { FormError } from '../../components/forms';
import { useNotify } from '../../components/snackbar';
import { Spinner } from '../../components/states';
import { type RunnerScope, timeAgo, useDeleteRunner, useRunners, useUpdateRunner } from './api';
import { RegisterRunnerDialog } from './RegisterRunnerDialog';
import { RunnerDialog } from './RunnerDialog';
import { RunnerVersion, SandboxChip } from './RunnerSandbox';

/** Online (green) or offline, with the last heartbeat as "2 minutes ago" (the exact time on hover). */
function Status({ runner }: { runner: Runner }) {
  const { t, i18n } = useTranslation();
  const seen = runner.touched ? timeAgo(runner.touched, i18n.language) : '';
  return (
    <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
      <Chip
        size="small"
        color={runner.online ? 'success' : 'default'}
        variant={runner.online ? 'filled' : 'outlined'}
        label={runner.online ? t('runners.online') : t('runners.offline')}
      />
      <Tooltip title={runner.touched ? formatDateTime(runner.touched) : ''}>
        <Typography variant="caption" color="text.secondary">
          {runner.touched ? t('runners.lastSeen', { ago: seen }) : t('runners.neverSeen')}
        </Typography>
      </Tooltip>
    </Stack>
  );
}

const Tags = ({ tags }: { tags: string[] }) => (
  <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 0.5 }}>
    {tags.map((tag) => (
      <Chip key={tag} size="small" label={tag} variant="outlined" />
    ))}
  </Box>
);

/**
 * The runners of one scope: a table on wide screens, cards on a phone; each with its status, slots, an enabled
 * switch, edit and delete. The list refreshes itself so runners going on- and offline show.
 */
export function RunnerList({ scope, filter }: { scope: RunnerScope; filter?: ReactNode }) {
  const { t } = useTranslation();
  const notify = useNotify();
  const phone = useMediaQuery('(max-width:600px)', { noSsr: true });
  const runners = useRunners(scope);
  const update = useUpdateRunner();
  const showProject = scope.projectId === null && !!scope.all;
  const [editing, setEditing] = useState<Runner | null>(null);
  const [registering, setRegistering] = useState(false);
  const del = useConfirmedDelete(
    useDeleteRunner(),
    (r: Runner) => r,
    (r) => t('runners.deleted', { name: r.name }),
  );

  const toggle = (r: Runner, active: boolean) =>
    update.mutate(
      { runner: r, change: { active } },
      {
        onSuccess: () => notify.success(t(active ? 'runners.enabled' : 'runners.disabled', { name: r.name })),
        onError: (err) => notify.error(err),
      },
    );

  const enabledSwitch = (r: Runner) => (
    <Tooltip title={t('runners.enabledHelp')}>
      <Switch
        checked={r.active}
        onChange={(e) => toggle(r, e.target.checked)}
        slotProps={{ input: { 'aria-label': t('runners.enabledOf', { name: r.name }) } }}
      />
    </Tooltip>
  );
  const actions = (r: Runner) => (
    <>
      <Tooltip title={t('runners.edit')}>
        <IconButton aria-label={t('runners.editOf', { name: r.name })} onClick={() => setEditing(r)}>
          <EditIcon fontSize="small" />
        </IconButton>
      </Tooltip>
      <Tooltip title={t('runners.delete')}>
        <IconButton aria-label={t('runners.deleteOf', { name: r.name })} onClick={() => del.ask(r)}>
          <DeleteIcon fontSize="small" />
        </IconButton>
      </Tooltip>
    </>
  );
  const slots = (r: Runner) => t('runners.slotsOf', { running: r.running_tasks, max: r.max_parallel_tasks });
  const list = runners.data ?? [];

  return (
    <Box>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, mb: 2, flexWrap: 'wrap' }}>
        <Typography variant="body2" color="text.secondary" sx={{ flex: 1, minWidth: 200 }}>
          {scope.projectId === null ? t('runners.introGlobal') : t('runners.introProject')}
        </Typography>
        {filter}
        <Button variant="contained" startIcon={<AddIcon />} onClick={() => setRegistering(true)}>
          {t('runners.register')}
        </Button>
      </Box>
      {runners.error && <FormError error={runners.error} />}
      {runners.isPending ? (
        <Spinner full={false} />
      ) : list.length === 0 ? (
        <Paper variant="outlined" sx={{ p: 3, textAlign: 'center' }}>
          <Typography color="text.secondary">
            {/* The global list without project runners: project runners may well exist. */}
            {scope.projectId === null && !scope.all
              ? t('runners.noneGlobal', { switch: t('runners.showProjectRunners') })
              : t('runners.none')}
          </Typography>
        </Paper>
      ) : phone ? (
        <Stack spacing={1} aria-label={t('runners.title')}>
          {list.map((r) => (
            <Card key={r.id} variant="outlined" data-runner={r.name}>
              <CardContent sx={{ '&:last-child': { pb: 1.5 } }}>
                <Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
                  <Typography variant="subtitle1" sx={{ fontWeight: 600, flex: 1, minWidth: 0 }} noWrap>
                    {r.name}
                  </Typography>
                  {enabledSwitch(r)}
                </Box>
                {showProject && (
                  <Typography variant="caption" color="text.secondary">
                    {r.project_name ? t('runners.projectOf', { name: r.project_name }) : t('runners.global')}
                  </Typography>
                )}
                <Status runner={r} />
                <Box sx={{ my: 1, display: 'flex', flexWrap: 'wrap', gap: 0.5, alignItems: 'center' }}>
                  <SandboxChip sandbox={r.sandbox} />
                  <Tags tags={r.tags} />
                </Box>
                <Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
                  <Typography variant="body2" color="text.secondary" sx={{ flex: 1 }}>
                    {slots(r)}
                    {r.version ? ` · ${t('runners.versionOf', { version: r.version })}` : ''}
                    {r.incompatible ? ` · ${t('runners.incompatible')}` : ''}
                  </Typography>
                  {actions(r)}
                </Box>
              </CardContent>
            </Card>
          ))}
        </Stack>
      ) : (
        <Paper variant="outlined">
          <TableContainer>
            <Table size="small" aria-label={t('runners.title')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('runners.name')}</TableCell>
                  {showProject && <TableCell>{t('runners.project')}</TableCell>}
                  <TableCell>{t('runners.tags')}</TableCell>
                  <TableCell>{t('runners.version')}</TableCell>
                  <TableCell>{t('runners.sandbox')}</TableCell>
                  <TableCell>{t('runners.status')}</TableCell>
                  <TableCell>{t('runners.slots')}</TableCell>
                  <TableCell align="center">{t('runners.enabledColumn')}</TableCell>
                  <TableCell align="right">{t('common.actions')}</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {list.map((r) => (
                  <TableRow key={r.id} hover data-runner={r.name}>
                    <TableCell sx={{ fontWeight: 600 }}>{r.name}</TableCell>
                    {showProject && <TableCell>{r.project_name ?? t('runners.global')}</TableCell>}
                    <TableCell>
                      <Tags tags={r.tags} />
                    </TableCell>
                    <TableCell sx={{ whiteSpace: 'nowrap' }}>
                      <RunnerVersion runner={r} />
                    </TableCell>
                    <TableCell>
                      <SandboxChip sandbox={r.sandbox} />
                    </TableCell>
                    <TableCell>
                      <Status runner={r} />
                    </TableCell>
                    <TableCell sx={{ whiteSpace: 'nowrap' }}>{slots(r)}</TableCell>
                    <TableCell align="center">{enabledSwitch(r)}</TableCell>
                    <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                      {actions(r)}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableContainer>
        </Paper>
      )}
      {editing && <RunnerDialog runner={editing} onClose={() => setEditing(null)} />}
      {registering && <RegisterRunnerDialog scope={scope} onClose={() => setRegistering(false)} />}
      <ConfirmDialog
        title={t('runners.delete')}
        text={t('runners.deleteConfirm', { name: del.target?.name ?? '' })}
        {...del.dialogProps}
      />
    </Box>
  );
}
