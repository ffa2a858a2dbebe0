import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowRightIcon from '@mui/icons-material/KeyboardArrowRight';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import {
  Box,
  Button,
  Chip,
  Collapse,
  IconButton,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import type { Environment, Inventory, Repository, Template } from '@signalbox/contracts';
import { Fragment, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { useResourceList } from '../../api/resources';
import { Guarded } from '../../components/access';
import { formatDateTime, shortDateAndTime } from '../../components/format';
import {
  Card,
  CardLine,
  CardList,
  fitCellSx,
  oneLineSx,
  shrinkCellSx,
  Truncated,
  usePhone,
} from '../../components/lists';
import { useProjectContext } from '../../components/project-context';
import { TableFrame } from '../../components/ui';
import { TaskStatusChip } from '../tasks';
import { runLabelKey } from './api';
import { appMissing, useAppLabel, useApps } from './apps';
import type { OptionalColumn } from './columns';
import { DriftBadge } from './DriftPanel';
import { LastTasks } from './LastTasks';

/** How much of the row's free width each cut-to-fit column takes (relative to the others shown). */
const shares = {
  name: '30%',
  playbook: '16%',
  inventory: '14%',
  environment: '14%',
  repository: '14%',
} as const;

/**
 * The header of a cut-to-fit column: never cut, it wraps between words when the column is narrow (German "Letzte
 * Aufgabe", say), so the column is never narrower than its longest word; its cells share the free width.
 */
const headerCellSx = { whiteSpace: 'normal', wordBreak: 'keep-all', overflowWrap: 'normal' } as const;

/** The last task's cell shares the free width but keeps its task number, date and time whole. */
const lastTaskCellSx = { width: '14%' } as const;

/** Versions are short: their column fits its content, up to this width. */
const versionSx = { ...oneLineSx, maxWidth: 140 } as const;

/**
 * The templates list with expandable rows (the last 5 tasks, each with Re-run): a table that fits its frame
 * (long text cut with an ellipsis, the whole text in a tooltip), cards on a phone.
 */
export function TemplatesTable({
  templates,
  visible,
  detailBase,
  onRun,
}: {
  templates: Template[];
  visible: (c: OptionalColumn) => boolean;
  detailBase: string;
  onRun: (template: Template) => void;
}) {
  const { t } = useTranslation();
  const { project } = useProjectContext();
  const registry = useApps().data;
  const appLabelOf = useAppLabel();
  const location = useLocation();
  const phone = usePhone();
  const inventories = useResourceList<Inventory>(project.id, 'inventory');
  const environments = useResourceList<Environment>(project.id, 'environment');
  const repositories = useResourceList<Repository>(project.id, 'repositories');
  const [open, setOpen] = useState<Set<number>>(new Set());
  const nameOf = (list: { id: number; name: string }[] | undefined, id: number | null) =>
    (id && list?.find((x) => x.id === id)?.name) || '—';
  const taskLink = (id: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(id));
    return `${location.pathname}?${params}`;
  };
  const toggle = (id: number) =>
    setOpen((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const columnCount =
    3 +
    (['version', 'status', 'lastTask', 'playbook', 'inventory', 'environment', 'repository'] as const).filter(
      visible,
    ).length;

  const expander = (tpl: Template) => {
    const expanded = open.has(tpl.id);
    return (
      <IconButton
        size="small"
        aria-expanded={expanded}
        aria-label={t(expanded ? 'tpl.collapseNamed' : 'tpl.expandNamed', { name: tpl.name })}
        onClick={() => toggle(tpl.id)}
      >
        {expanded ? <KeyboardArrowDownIcon /> : <KeyboardArrowRightIcon />}
      </IconButton>
    );
  };
  const runButton = (tpl: Template) => (
    <Guarded permission="runProjectTasks">
      <Button
        size="small"
        variant="outlined"
        startIcon={<PlayArrowIcon />}
        aria-label={`${t(runLabelKey(tpl.type))}: ${tpl.name}`}
        onClick={() => onRun(tpl)}
      >
        {t(runLabelKey(tpl.type))}
      </Button>
    </Guarded>
  );
  const nameLink = (tpl: Template) => (
    <Link component={RouterLink} to={`${detailBase}/${tpl.id}`} sx={{ fontWeight: 500 }}>
      {tpl.name}
    </Link>
  );
  /** A warning chip on a template whose app's binary the server does not find. */
  const missingApp = (tpl: Template) =>
    appMissing(registry, tpl.app) ? (
      <Tooltip title={t('tpl.appMissingHelp', { app: appLabelOf(tpl.app || 'ansible') })}>
        <Chip size="small" color="warning" variant="outlined" label={t('tpl.appMissing')} data-app-missing />
      </Tooltip>
    ) : null;
  // The task and its time are never cut: the date and the time may go on two lines, and set the column's narrowest
  // width; who ran it is cut to the column (its box adds nothing to that width).
  const lastTask = (tpl: Template) => {
    const last = tpl.last_task;
    if (!last) return '—';
    const when = last.created ?? last.start;
    const parts = shortDateAndTime(when);
    return (
      <>
        <Link component={RouterLink} to={taskLink(last.id)}>
          #{last.id}
        </Link>
        {parts && (
          <Tooltip title={formatDateTime(when)}>
            <Typography variant="caption" color="text.secondary" component="div" data-last-task-time>
              <Box component="span" sx={{ whiteSpace: 'nowrap' }}>
                {parts[0]}
              </Box>{' '}
              <Box component="span" sx={{ whiteSpace: 'nowrap' }}>
                {parts[1]}
              </Box>
            </Typography>
          </Tooltip>
        )}
        {last.user_name && (
          <Box sx={{ width: 0, minWidth: '100%' }}>
            <Truncated text={last.user_name}>
              <Typography variant="caption" color="text.secondary" component="div" sx={oneLineSx}>
                {last.user_name}
              </Typography>
            </Truncated>
          </Box>
        )}
      </>
    );
  };
  const cut = (text: string, mono?: boolean) => (text === '—' ? text : <Truncated text={text} mono={mono} />);
  const inventory = (tpl: Template) => nameOf(inventories.data, tpl.inventory_id);
  const environment = (tpl: Template) => nameOf(environments.data, tpl.environment_id);
  const repository = (tpl: Template) => nameOf(repositories.data, tpl.repository_id);

  if (phone)
    return (
      <>
        <CardList label={t('nav.templates')}>
          {templates.map((tpl) => {
            const last = tpl.last_task;
            return (
              <Card
                key={tpl.id}
                title={
                  <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.5, ml: -1 }}>
                    {expander(tpl)}
                    {nameLink(tpl)}
                    {missingApp(tpl)}
                    <DriftBadge template={tpl} to={`${detailBase}/${tpl.id}`} />
                  </Box>
                }
                aside={runButton(tpl)}
              >
                {visible('status') && last && (
                  <CardLine label={t('tpl.col.status')}>
                    <TaskStatusChip status={last.status} />
                  </CardLine>
                )}
                {visible('lastTask') && last && (
                  <CardLine label={t('tpl.col.lastTask')}>{lastTask(tpl)}</CardLine>
                )}
                {visible('version') && last?.version && (
                  <CardLine label={t('tpl.col.version')}>{last.version}</CardLine>
                )}
                {visible('playbook') && tpl.playbook && (
                  <CardLine label={t('tpl.col.playbook')}>
                    <Box component="span" sx={{ fontFamily: 'monospace', fontSize: 13 }}>
                      {tpl.playbook}
                    </Box>
                  </CardLine>
                )}
                {visible('inventory') && tpl.inventory_id && (
                  <CardLine label={t('tpl.col.inventory')}>{inventory(tpl)}</CardLine>
                )}
                {visible('environment') && tpl.environment_id && (
                  <CardLine label={t('tpl.col.environment')}>{environment(tpl)}</CardLine>
                )}
                {visible('repository') && tpl.repository_id && (
                  <CardLine label={t('tpl.col.repository')}>{repository(tpl)}</CardLine>
                )}
                <Collapse in={open.has(tpl.id)} timeout="auto" unmountOnExit>
                  <Box sx={{ mt: 1 }}>
                    <LastTasks template={tpl} limit={5} />
                  </Box>
                </Collapse>
              </Card>
            );
          })}
        </CardList>
        {templates.length === 0 && (
          <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
            {t('tpl.empty')}
          </Typography>
        )}
      </>
    );

  return (
    <TableFrame empty={templates.length === 0 && t('tpl.empty')}>
      <Table
        size="small"
        aria-label={t('nav.templates')}
        sx={{
          '& th': { whiteSpace: 'nowrap', verticalAlign: 'bottom' },
          // 12 px between columns rather than 16: every header fits whole at 1280 px, all columns shown.
          '& th, & td': { px: 1.5 },
        }}
      >
        <TableHead>
          <TableRow>
            <TableCell padding="checkbox" sx={fitCellSx} />
            <TableCell sx={headerCellSx}>{t('res.name')}</TableCell>
            {visible('version') && <TableCell sx={fitCellSx}>{t('tpl.col.version')}</TableCell>}
            {visible('status') && <TableCell sx={fitCellSx}>{t('tpl.col.status')}</TableCell>}
            {visible('lastTask') && <TableCell sx={fitCellSx}>{t('tpl.col.lastTask')}</TableCell>}
            {(['playbook', 'inventory', 'environment', 'repository'] as const).map(
              (c) =>
                visible(c) && (
                  <TableCell key={c} sx={headerCellSx}>
                    {t(`tpl.col.${c}`)}
                  </TableCell>
                ),
            )}
            <TableCell align="right" sx={fitCellSx}>
              {t('common.actions')}
            </TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {templates.map((tpl) => {
            const last = tpl.last_task;
            const expanded = open.has(tpl.id);
            return (
              <Fragment key={tpl.id}>
                <TableRow hover sx={{ '& > td': { borderBottom: expanded ? 'unset' : undefined } }}>
                  <TableCell padding="checkbox" sx={fitCellSx}>
                    {expander(tpl)}
                  </TableCell>
                  <TableCell sx={shrinkCellSx(shares.name)}>
                    <Truncated text={tpl.name}>
                      <Link
                        component={RouterLink}
                        to={`${detailBase}/${tpl.id}`}
                        sx={{ fontWeight: 500, ...oneLineSx }}
                      >
                        {tpl.name}
                      </Link>
                    </Truncated>
                    {missingApp(tpl)}
                    <DriftBadge template={tpl} to={`${detailBase}/${tpl.id}`} />
                  </TableCell>
                  {visible('version') && (
                    <TableCell sx={fitCellSx}>
                      {last?.version ? (
                        <Truncated text={last.version}>
                          <Box component="span" sx={versionSx}>
                            {last.version}
                          </Box>
                        </Truncated>
                      ) : (
                        '—'
                      )}
                    </TableCell>
                  )}
                  {visible('status') && (
                    <TableCell sx={fitCellSx}>
                      {last ? <TaskStatusChip status={last.status} /> : '—'}
                    </TableCell>
                  )}
                  {visible('lastTask') && <TableCell sx={lastTaskCellSx}>{lastTask(tpl)}</TableCell>}
                  {visible('playbook') && (
                    <TableCell sx={shrinkCellSx(shares.playbook)}>{cut(tpl.playbook || '—', true)}</TableCell>
                  )}
                  {visible('inventory') && (
                    <TableCell sx={shrinkCellSx(shares.inventory)}>{cut(inventory(tpl))}</TableCell>
                  )}
                  {visible('environment') && (
                    <TableCell sx={shrinkCellSx(shares.environment)}>{cut(environment(tpl))}</TableCell>
                  )}
                  {visible('repository') && (
                    <TableCell sx={shrinkCellSx(shares.repository)}>{cut(repository(tpl))}</TableCell>
                  )}
                  <TableCell align="right" sx={fitCellSx}>
                    {runButton(tpl)}
                  </TableCell>
                </TableRow>
                <TableRow>
                  <TableCell sx={{ py: 0, maxWidth: 0 }} colSpan={columnCount}>
                    <Collapse in={expanded} timeout="auto" unmountOnExit>
                      <Box sx={{ py: 1, overflowX: 'auto' }}>
                        <LastTasks template={tpl} limit={5} />
                      </Box>
                    </Collapse>
                  </TableCell>
                </TableRow>
              </Fragment>
            );
          })}
        </TableBody>
      </Table>
    </TableFrame>
  );
}
