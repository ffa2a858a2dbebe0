import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowRightIcon from '@mui/icons-material/KeyboardArrowRight';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import {
  Box,
  Button,
  Collapse,
  IconButton,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@mui/material';
import type { Environment, Inventory, Repository, Template } from '@signalbox/contracts';
import { Fragment, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useLocation } from 'react-router';
import { Guarded } from '../../app/access';
import { formatDateTime } from '../../app/format';
import { useProjectContext } from '../../app/project-context';
import { TaskStatusChip } from '../tasks/TaskStatusChip';
import { runLabelKey } from './api';
import type { OptionalColumn } from './columns';
import { LastTasks } from './LastTasks';
import { useResourceList } from './shared/api';
import { TableFrame } from './shared/ui';

/** The actions column stays in view while a wide table scrolls sideways. */
const stickyRight = {
  position: 'sticky',
  right: 0,
  bgcolor: 'background.paper',
  boxShadow: (theme: { palette: { divider: string } }) => `inset 1px 0 0 ${theme.palette.divider}`,
} as const;

/** The templates table with expandable rows (the last 5 tasks, each with Re-run). */
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
  const location = useLocation();
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

  return (
    <TableFrame empty={templates.length === 0 && t('tpl.empty')}>
      <Table size="small" aria-label={t('nav.templates')}>
        <TableHead>
          <TableRow>
            <TableCell padding="checkbox" />
            <TableCell>{t('res.name')}</TableCell>
            {visible('version') && <TableCell>{t('tpl.col.version')}</TableCell>}
            {visible('status') && <TableCell>{t('tpl.col.status')}</TableCell>}
            {visible('lastTask') && <TableCell>{t('tpl.col.lastTask')}</TableCell>}
            {visible('playbook') && <TableCell>{t('tpl.col.playbook')}</TableCell>}
            {visible('inventory') && <TableCell>{t('tpl.col.inventory')}</TableCell>}
            {visible('environment') && <TableCell>{t('tpl.col.environment')}</TableCell>}
            {visible('repository') && <TableCell>{t('tpl.col.repository')}</TableCell>}
            <TableCell align="right" sx={stickyRight}>
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
                  <TableCell padding="checkbox">
                    <IconButton
                      size="small"
                      aria-expanded={expanded}
                      aria-label={t(expanded ? 'tpl.collapseNamed' : 'tpl.expandNamed', { name: tpl.name })}
                      onClick={() => toggle(tpl.id)}
                    >
                      {expanded ? <KeyboardArrowDownIcon /> : <KeyboardArrowRightIcon />}
                    </IconButton>
                  </TableCell>
                  <TableCell sx={{ wordBreak: 'break-word', minWidth: 120 }}>
                    <Link component={RouterLink} to={`${detailBase}/${tpl.id}`} sx={{ fontWeight: 500 }}>
                      {tpl.name}
                    </Link>
                  </TableCell>
                  {visible('version') && <TableCell>{last?.version ?? '—'}</TableCell>}
                  {visible('status') && (
                    <TableCell>{last ? <TaskStatusChip status={last.status} /> : '—'}</TableCell>
                  )}
                  {visible('lastTask') && (
                    <TableCell sx={{ whiteSpace: 'nowrap' }}>
                      {last ? (
                        <>
                          <Link component={RouterLink} to={taskLink(last.id)}>
                            #{last.id}
                          </Link>
                          <Typography variant="caption" color="text.secondary" component="div">
                            {formatDateTime(last.created ?? last.start)}
                            {last.user_name ? ` · ${last.user_name}` : ''}
                          </Typography>
                        </>
                      ) : (
                        '—'
                      )}
                    </TableCell>
                  )}
                  {visible('playbook') && (
                    <TableCell sx={{ wordBreak: 'break-all', fontFamily: 'monospace', fontSize: 13 }}>
                      {tpl.playbook || '—'}
                    </TableCell>
                  )}
                  {visible('inventory') && (
                    <TableCell>{nameOf(inventories.data, tpl.inventory_id)}</TableCell>
                  )}
                  {visible('environment') && (
                    <TableCell>{nameOf(environments.data, tpl.environment_id)}</TableCell>
                  )}
                  {visible('repository') && (
                    <TableCell>{nameOf(repositories.data, tpl.repository_id)}</TableCell>
                  )}
                  <TableCell align="right" sx={stickyRight}>
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
                  </TableCell>
                </TableRow>
                <TableRow>
                  <TableCell sx={{ py: 0 }} colSpan={columnCount}>
                    <Collapse in={expanded} timeout="auto" unmountOnExit>
                      <Box sx={{ py: 1 }}>
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
