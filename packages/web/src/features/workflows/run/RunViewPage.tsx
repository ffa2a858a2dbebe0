import StopIcon from '@mui/icons-material/Stop';
import { Box, Button, Paper, Typography } from '@mui/material';
import type { Template, WorkflowRun } from '@signalbox/contracts';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate, useParams } from 'react-router';
import { useResourceList } from '../../../api/resources';
import { formatDateTime, formatDuration } from '../../../components/format';
import { usePhone } from '../../../components/lists';
import { DetailHeader } from '../../../components/PageHeader';
import { useProjectContext } from '../../../components/project-context';
import { useNotify } from '../../../components/snackbar';
import { Spinner } from '../../../components/states';
import { ErrorAlert, PageBody } from '../../../components/ui';
import { runPaths, useLiveWorkflowRuns, useRunAction, useWorkflowRun } from '../api';
import { nodeLabel } from '../editor/draft';
import { NodeList } from '../graph/NodeList';
import { type Selection, WorkflowGraph } from '../graph/WorkflowGraph';
import { ApprovalDialog, type ApprovalTarget } from './ApprovalDialog';
import { RunNodePanel } from './RunNodePanel';
import { RunStatusChip } from './RunStatusChip';
import { isFinished, runItems } from './run-items';

/** The wall clock, ticking every second while `running`: elapsed times count up. */
function useNow(running: boolean) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, [running]);
  return now;
}

/** /project/{id}/workflow-runs/{runId}: a run's graph, live. */
export default function RunViewPage() {
  const { project } = useProjectContext();
  const runId = Number(useParams().runId);
  const run = useWorkflowRun(project.id, runId);
  useLiveWorkflowRuns(project.id);
  if (run.isPending) return <Spinner full={false} />;
  if (run.error)
    return (
      <PageBody>
        <ErrorAlert error={run.error} />
      </PageBody>
    );
  return <RunView run={run.data} />;
}

function RunView({ run }: { run: WorkflowRun }) {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const navigate = useNavigate();
  const location = useLocation();
  const notify = useNotify();
  const phone = usePhone();
  const templates = useResourceList<Template>(project.id, 'templates');
  const action = useRunAction(project.id);
  const finished = isFinished(run);
  const now = useNow(!finished);
  const [selection, setSelection] = useState<Selection>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  // On a phone the panel is under the list: bring the chosen node's panel into view.
  useEffect(() => {
    if (phone && selection) panelRef.current?.scrollIntoView({ block: 'start' });
  }, [phone, selection]);
  const [approving, setApproving] = useState<ApprovalTarget | null>(null);
  const canRun = can('runProjectTasks');

  const items = useMemo(() => {
    const name = (id: number) => templates.data?.find((tpl) => tpl.id === id)?.name;
    return runItems(run, name, t, now);
  }, [run, templates.data, t, now]);
  const selectedNode = selection?.kind === 'node' ? run.nodes.find((n) => n.id === selection.id) : undefined;

  const openLog = (taskId: number) => {
    const params = new URLSearchParams(location.search);
    params.set('t', String(taskId));
    navigate(`${location.pathname}?${params}`);
  };
  const review = (nodeId: string) => {
    const node = run.nodes.find((n) => n.id === nodeId);
    const state = run.node_states.find((s) => s.node_id === nodeId);
    if (!node || !state) return;
    setApproving({
      projectId: project.id,
      runId: run.id,
      nodeId,
      nodeName: nodeLabel(node),
      workflowName: run.workflow_name,
      message: node.type === 'approval' ? node.message : '',
      digest: state.input_digest,
      given: state.approvals_given,
      required: state.approvals_required,
    });
  };
  /** A click opens what the node has: its task's log, or its approval; any other node is selected. */
  const open = (nodeId: string) => {
    const state = run.node_states.find((s) => s.node_id === nodeId);
    if (state?.task_id) openLog(state.task_id);
    else if (state?.status === 'waiting_approval') review(nodeId);
  };
  const act = async (path: string, body: unknown, done: string) => {
    try {
      await action.mutateAsync({ path, body });
      notify.success(done);
    } catch (err) {
      notify.error(err);
    }
  };

  return (
    <>
      <DetailHeader
        label={t('wf.breadcrumb')}
        listLabel={run.workflow_name}
        listPath={`/project/${project.id}/workflows/${run.workflow_id}/runs`}
        title={t('wf.runView.title', { id: run.id })}
        actions={
          canRun &&
          !finished && (
            <Button
              color="error"
              variant="outlined"
              startIcon={<StopIcon />}
              disabled={action.isPending}
              onClick={() => void act(runPaths.stop(run.id), {}, t('wf.runView.stopped', { id: run.id }))}
            >
              {t('wf.runView.stop')}
            </Button>
          )
        }
      />
      <PageBody>
        <Box
          sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', alignItems: 'center', mb: 1.5 }}
          data-testid="run-summary"
        >
          <RunStatusChip status={run.status} size="medium" />
          <Typography variant="body2">
            {t('wf.runView.by', { name: run.user_name ?? t(`wf.runSource.${run.source}`) })}
          </Typography>
          <Typography variant="body2">{formatDateTime(run.created)}</Typography>
          <Typography variant="body2">{formatDuration(run.start, run.end, now)}</Typography>
          {run.message && (
            <Typography variant="body2" color="text.secondary">
              {run.message}
            </Typography>
          )}
        </Box>
        <Box
          sx={{
            display: 'grid',
            gap: 2,
            gridTemplateColumns: { xs: '1fr', md: 'minmax(0, 1fr) 340px' },
            alignItems: 'start',
          }}
        >
          {phone ? (
            <NodeList
              label={t('wf.nodes')}
              items={items}
              parents={(id) =>
                run.edges
                  .filter((e) => e.to === id)
                  .map((e) => items.find((i) => i.id === e.from)?.title ?? e.from)
              }
              selectedId={selectedNode?.id ?? null}
              onSelect={(id) => setSelection({ kind: 'node', id })}
            />
          ) : (
            <WorkflowGraph
              label={t('wf.runView.graphLabel', { id: run.id })}
              items={items}
              edges={run.edges}
              selection={selection}
              onSelect={setSelection}
              onNodeClick={open}
              height="calc(100vh - 220px)"
            />
          )}
          <Paper ref={panelRef} variant="outlined" sx={{ p: 2, minWidth: 0 }}>
            {selectedNode ? (
              <RunNodePanel
                run={run}
                node={selectedNode}
                now={now}
                canRun={canRun}
                onOpenLog={openLog}
                onApprove={() => review(selectedNode.id)}
                onRerun={() =>
                  void act(
                    runPaths.rerun(run.id),
                    { node_id: selectedNode.id },
                    t('wf.runView.rerunStarted', { node: nodeLabel(selectedNode) }),
                  )
                }
              />
            ) : (
              <Typography color="text.secondary">{t('wf.runView.pick')}</Typography>
            )}
          </Paper>
        </Box>
      </PageBody>
      {approving && <ApprovalDialog target={approving} onClose={() => setApproving(null)} />}
    </>
  );
}
