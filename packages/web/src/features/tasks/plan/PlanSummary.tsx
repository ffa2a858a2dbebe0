import { Box, Button, Chip, Stack, TextField, Typography } from '@mui/material';
import {
  type PlanFile,
  type PlanResourceChange,
  type PlanSummary as Summary,
  taskStatuses,
} from '@signalbox/contracts';
import { type ReactNode, useDeferredValue, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDateTime } from '../../../components/format';
import { FormError } from '../../../components/forms';
import { planningApps, type Task, useTaskPlan } from '../api';
import { actionSymbol, groupPlanChanges, isDestructive } from './plan-view';

/** How many changes of one group are drawn; past it the search narrows them down. */
const DRAWN_MAX = 500;

/**
 * Statuses in which a planning task may have its plan summary (it is kept before waiting for confirmation): every
 * one after its start.
 */
const planned = new Set<string>(
  taskStatuses.filter((s) => s !== 'waiting' && s !== 'starting' && s !== 'waiting_approval'),
);

/**
 * The plan of a Terraform, OpenTofu or Terragrunt task, as a structured diff: its counts, then the resource
 * changes grouped by action (destroying ones first, in red), searchable by address, with the names of the
 * attributes each changes (values are never kept). Open at once while the task waits for confirmation.
 */
export function TaskPlan({ projectId, task }: { projectId: number; task: Task }) {
  const plan = useTaskPlanOf(projectId, task);
  if (plan.error) return <FormError error={plan.error} />;
  if (!plan.data) return null;
  return (
    <PlanSummaryView key={task.id} plan={plan.data} open={String(task.status) === 'waiting_confirmation'}>
      {plan.data.plan_file && <PlanFileFacts file={plan.data.plan_file} />}
    </PlanSummaryView>
  );
}

/** The plan of a task (null: none, or not a planning task's): shared by the plan view and the task's actions. */
export function useTaskPlanOf(projectId: number, task: Task | undefined) {
  const status = String(task?.status ?? '');
  const enabled = !!task && planningApps.includes(task.tpl_app ?? '') && planned.has(status);
  const plan = useTaskPlan(projectId, task?.id ?? 0, status, enabled);
  return enabled ? plan : { data: null, error: null };
}

/** True when the stored plan of a plan-only task may still be applied by a later task. */
export function applicable(file: PlanFile | null | undefined, now = Date.now()): file is PlanFile {
  return (
    !!file?.stored && file.applied_by_task === null && !!file.expires_at && Date.parse(file.expires_at) > now
  );
}

/**
 * What the plan is bound to: the SHA-256 of its file and the commit it was made from; who approved it, which task
 * applied it, and until when a later task may apply a stored one.
 */
function PlanFileFacts({ file }: { file: PlanFile }) {
  const { t } = useTranslation();
  const expired = !!file.stored && !!file.expires_at && Date.parse(file.expires_at) <= Date.now();
  const facts = [
    t('plan.digest', { digest: file.digest.slice(0, 12) }),
    file.commit_hash ? t('plan.commit', { commit: file.commit_hash.slice(0, 8) }) : null,
    file.state_serial !== null ? t('plan.serial', { serial: file.state_serial }) : null,
    file.approved_at
      ? t('plan.approvedBy', { name: file.approved_by_name ?? '—', at: formatDateTime(file.approved_at) })
      : null,
    file.applied_by_task !== null ? t('plan.appliedBy', { id: file.applied_by_task }) : null,
    file.stored && file.applied_by_task === null && file.expires_at
      ? t(expired ? 'plan.expired' : 'plan.applicableUntil', { at: formatDateTime(file.expires_at) })
      : null,
  ].filter((x): x is string => !!x);
  return (
    <Typography
      variant="caption"
      color={expired ? 'warning.main' : 'text.secondary'}
      component="p"
      data-plan-file
      title={file.digest}
      sx={{ mt: 1, overflowWrap: 'anywhere' }}
    >
      {facts.join(' · ')}
    </Typography>
  );
}

function PlanCounts({ counts, drift }: { counts: Summary['counts']; drift: number }) {
  const { t } = useTranslation();
  const chip = (label: string, color: 'success' | 'warning' | 'error' | 'default', n: number) => (
    <Chip
      size="small"
      label={label}
      color={n > 0 ? color : 'default'}
      variant={n > 0 ? 'filled' : 'outlined'}
    />
  );
  return (
    <>
      {chip(t('plan.add', { n: counts.add }), 'success', counts.add)}
      {chip(t('plan.change', { n: counts.change }), 'warning', counts.change)}
      {chip(t('plan.replace', { n: counts.replace }), 'error', counts.replace)}
      {chip(t('plan.destroy', { n: counts.destroy }), 'error', counts.destroy)}
      {counts.read > 0 && chip(t('plan.read', { n: counts.read }), 'default', counts.read)}
      {drift > 0 && chip(t('plan.drift', { n: drift }), 'warning', drift)}
    </>
  );
}

function ChangeLine({ change }: { change: PlanResourceChange }) {
  const { t } = useTranslation();
  const destructive = isDestructive(change.action);
  const sensitive = new Set(change.sensitive);
  return (
    <Box
      component="li"
      data-plan-address={change.address}
      sx={{ py: 0.25, color: destructive ? 'error.main' : undefined, overflowWrap: 'anywhere' }}
    >
      <Box component="code" sx={{ fontFamily: 'monospace', fontWeight: destructive ? 700 : 500 }}>
        {`${actionSymbol(change)} ${change.address}`}
      </Box>
      {change.action === 'replace' && (
        <Typography component="span" variant="caption" sx={{ ml: 1 }}>
          ({change.actions[0] === 'create' ? t('plan.createFirst') : t('plan.deleteFirst')})
        </Typography>
      )}
      {change.attributes.length > 0 && (
        <Box
          component="span"
          sx={{ ml: 1, color: 'text.secondary', fontFamily: 'monospace', fontSize: '0.8rem' }}
        >
          {change.attributes.map((name, i) => (
            <span key={name}>
              {i > 0 && ', '}
              {name}
              {sensitive.has(name) && (
                <Typography component="span" variant="caption" sx={{ fontStyle: 'italic' }}>
                  {` (${t('plan.sensitive')})`}
                </Typography>
              )}
            </span>
          ))}
        </Box>
      )}
    </Box>
  );
}

export function PlanSummaryView({
  plan,
  open: initiallyOpen,
  children,
}: {
  plan: Summary;
  open: boolean;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(initiallyOpen);
  const [query, setQuery] = useState('');
  const deferredQuery = useDeferredValue(query);
  const groups = groupPlanChanges(plan.changes, deferredQuery);
  return (
    <Box
      component="section"
      aria-label={t('plan.title')}
      data-plan-summary
      sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 1.5, flexShrink: 0 }}
    >
      <Stack direction="row" sx={{ alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
        <Typography variant="subtitle2" component="h3">
          {t('plan.title')}
        </Typography>
        <PlanCounts counts={plan.counts} drift={plan.drift} />
        <Box sx={{ flex: 1 }} />
        {plan.changes.length > 0 && (
          <Button size="small" onClick={() => setOpen(!open)} aria-expanded={open}>
            {open ? t('plan.hide') : t('plan.show')}
          </Button>
        )}
      </Stack>
      {children}
      {open && plan.changes.length > 0 && (
        <>
          <TextField
            size="small"
            label={t('plan.search')}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            sx={{ mt: 1.5, width: { xs: '100%', sm: 360 } }}
            slotProps={{ htmlInput: { 'data-plan-search': true, maxLength: 500 } }}
          />
          <Box sx={{ maxHeight: '35vh', overflow: 'auto', mt: 1 }}>
            {groups.map((group) => (
              <Box
                key={group.action}
                component="section"
                aria-label={t(`plan.group.${group.action}`)}
                data-plan-group={group.action}
                sx={{ mt: 1 }}
              >
                <Typography
                  variant="overline"
                  component="h4"
                  sx={{
                    color: isDestructive(group.action) ? 'error.main' : 'text.secondary',
                    lineHeight: 1.6,
                  }}
                >
                  {`${t(`plan.group.${group.action}`)} (${group.changes.length})`}
                </Typography>
                <Box component="ul" sx={{ listStyle: 'none', m: 0, p: 0 }}>
                  {group.changes.slice(0, DRAWN_MAX).map((change) => (
                    <ChangeLine key={`${change.action}:${change.address}`} change={change} />
                  ))}
                </Box>
                {group.changes.length > DRAWN_MAX && (
                  <Typography variant="caption" color="text.secondary">
                    {t('plan.more', { n: group.changes.length - DRAWN_MAX })}
                  </Typography>
                )}
              </Box>
            ))}
            {groups.length === 0 && (
              <Typography variant="body2" color="text.secondary" sx={{ mt: 1 }}>
                {t('plan.noMatches')}
              </Typography>
            )}
            {plan.omitted > 0 && (
              <Typography variant="caption" color="text.secondary" component="p" sx={{ mt: 1 }}>
                {t('plan.omitted', { n: plan.omitted })}
              </Typography>
            )}
          </Box>
        </>
      )}
    </Box>
  );
}
