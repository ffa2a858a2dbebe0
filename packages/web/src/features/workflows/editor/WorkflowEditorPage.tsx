import HistoryIcon from '@mui/icons-material/History';
import PlayArrowIcon from '@mui/icons-material/PlayArrow';
import SaveIcon from '@mui/icons-material/Save';
import { Alert, Box, Button, Paper } from '@mui/material';
import type { Workflow, WorkflowNodeType } from '@signalbox/contracts';
import { useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useNavigate, useParams } from 'react-router';
import { usePhone } from '../../../components/lists';
import { DetailHeader } from '../../../components/PageHeader';
import { useProjectContext } from '../../../components/project-context';
import { useNotify } from '../../../components/snackbar';
import { Spinner } from '../../../components/states';
import { ErrorAlert, PageBody } from '../../../components/ui';
import { useWorkflow, useWorkflowSave } from '../api';
import { nodeDetail, runOrder } from '../graph/describe';
import type { GraphItem } from '../graph/GraphNode';
import { NodeList } from '../graph/NodeList';
import { type Selection, WorkflowGraph } from '../graph/WorkflowGraph';
import { StartRunDialog } from '../run/StartRunDialog';
import {
  addNode,
  bodyOf,
  connect,
  type Draft,
  draftOf,
  emptyDraft,
  freeNodeId,
  newNode,
  nodeLabel,
  removeEdge,
  removeNode,
} from './draft';
import { EdgePanel } from './EdgePanel';
import { EditorToolbar } from './EditorToolbar';
import { ErrorSummary } from './ErrorSummary';
import { type EditorErrors, noErrors, placeErrors } from './errors';
import { NodePanel } from './NodePanel';
import { useEditorData } from './useEditorData';
import { WorkflowSettings } from './WorkflowSettings';

/** /project/{id}/workflows/{workflowId|new}: the workflow's graph editor (read-only below manager). */
export default function WorkflowEditorPage() {
  const { project } = useProjectContext();
  const { workflowId = 'new' } = useParams();
  const id = workflowId === 'new' ? 0 : Number(workflowId);
  const loaded = useWorkflow(project.id, id, id > 0);
  if (id > 0 && loaded.isPending) return <Spinner full={false} />;
  if (id > 0 && loaded.error)
    return (
      <PageBody>
        <ErrorAlert error={loaded.error} />
      </PageBody>
    );
  return <WorkflowEditor key={loaded.data?.updated ?? 'new'} saved={loaded.data ?? null} />;
}

function WorkflowEditor({ saved }: { saved: Workflow | null }) {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const navigate = useNavigate();
  const notify = useNotify();
  const phone = usePhone();
  const readOnly = !can('manageProjectResources');
  const data = useEditorData(project.id);
  const [draft, setDraft] = useState<Draft>(() => (saved ? draftOf(saved) : emptyDraft));
  const [selection, setSelection] = useState<Selection>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  // On a phone the panel is under the list: bring the chosen node's panel into view.
  useEffect(() => {
    if (phone && selection) panelRef.current?.scrollIntoView({ block: 'start' });
  }, [phone, selection]);
  const [errors, setErrors] = useState<EditorErrors>(noErrors);
  const [running, setRunning] = useState(false);
  const save = useWorkflowSave(project.id);
  const dirty = !saved || JSON.stringify(bodyOf(draft)) !== JSON.stringify(bodyOf(draftOf(saved)));
  const base = `/project/${project.id}/workflows`;

  const edit = readOnly ? () => {} : setDraft;
  const selectedNode =
    selection?.kind === 'node' ? draft.nodes.find((n) => n.id === selection.id) : undefined;
  const selectedEdge =
    selection?.kind === 'edge'
      ? draft.edges.find((e) => e.from === selection.from && e.to === selection.to)
      : undefined;

  const items = useMemo<GraphItem[]>(() => {
    const templateName = (tid: number) => data.templates.find((tpl) => tpl.id === tid)?.name;
    return runOrder(draft.nodes, draft.edges).map((n) => ({
      id: n.id,
      title: nodeLabel(n),
      kind: n.type,
      detail: nodeDetail(n, templateName, t),
      invalid: errors.nodes.has(n.id),
    }));
  }, [draft.nodes, draft.edges, data.templates, errors, t]);
  const invalidEdges = useMemo(() => new Set(errors.edges.keys()), [errors]);
  const titleOf = (nid: string) => items.find((i) => i.id === nid)?.title ?? nid;

  const add = (type: WorkflowNodeType) => {
    const nid = freeNodeId(draft, type);
    const after = selectedNode?.id ?? null;
    setDraft(addNode(draft, newNode(nid, type, data.templates[0]?.id ?? 0), after));
    setSelection({ kind: 'node', id: nid });
  };
  const remove = (target: NonNullable<Selection>) => {
    setDraft((d) =>
      target.kind === 'node' ? removeNode(d, target.id) : removeEdge(d, target.from, target.to),
    );
    setSelection(null);
  };
  const onConnect = (from: string, to: string) => {
    const next = connect(draft, from, to);
    if (typeof next === 'string') notify.error(t(`wf.connect.problem.${next}`));
    else setDraft(next);
  };

  const submit = async () => {
    const body = bodyOf(draft);
    try {
      const result = await save.mutateAsync({ id: saved?.id ?? null, body });
      setErrors(noErrors);
      notify.success(t('wf.saved', { name: result.name }));
      if (!saved) navigate(`${base}/${result.id}`, { replace: true });
    } catch (err) {
      // Placed by the body that was sent: node and edge indexes are those of this draft.
      setErrors(
        placeErrors(
          err,
          body.nodes.map((n) => n.id),
          body.edges,
        ),
      );
    }
  };

  const panel = selectedNode ? (
    <NodePanel
      draft={draft}
      node={selectedNode}
      onDraft={edit}
      onDelete={() => remove({ kind: 'node', id: selectedNode.id })}
      templates={data.templates}
      inventories={data.inventories}
      environments={data.environments}
      members={data.members}
      errors={errors}
    />
  ) : selectedEdge ? (
    <EdgePanel
      draft={draft}
      edge={selectedEdge}
      onDraft={edit}
      onRemoved={() => setSelection(null)}
      errors={errors}
    />
  ) : (
    <WorkflowSettings
      projectId={project.id}
      draft={draft}
      onDraft={edit}
      errors={errors}
      readOnly={readOnly}
    />
  );

  return (
    <>
      <DetailHeader
        label={t('wf.breadcrumb')}
        listLabel={t('nav.workflows')}
        listPath={base}
        title={draft.name || saved?.name || t('wf.new')}
        actions={
          <Box sx={{ display: 'flex', gap: 1, flexWrap: 'wrap' }}>
            {saved && (
              <Button component={RouterLink} to={`${base}/${saved.id}/runs`} startIcon={<HistoryIcon />}>
                {t('wf.runs.title')}
              </Button>
            )}
            {saved && can('runProjectTasks') && (
              <Button
                variant="outlined"
                startIcon={<PlayArrowIcon />}
                disabled={dirty}
                onClick={() => setRunning(true)}
              >
                {t('wf.run')}
              </Button>
            )}
            {!readOnly && (
              <Button
                variant="contained"
                startIcon={<SaveIcon />}
                disabled={save.isPending || !dirty}
                onClick={() => void submit()}
              >
                {t('common.save')}
              </Button>
            )}
          </Box>
        }
      />
      <PageBody>
        {readOnly && (
          <Alert severity="info" sx={{ mb: 1.5 }}>
            {t('wf.readOnly')}
          </Alert>
        )}
        <ErrorAlert error={data.error} />
        <ErrorSummary
          errors={errors}
          title={titleOf}
          onSelectNode={(nid) => setSelection({ kind: 'node', id: nid })}
          onSelectEdge={(key) => {
            const [from = '', to = ''] = key.split('→');
            setSelection({ kind: 'edge', from, to });
          }}
        />
        {!readOnly && <EditorToolbar onAdd={add} afterName={selectedNode ? nodeLabel(selectedNode) : null} />}
        <Box
          sx={{
            display: 'grid',
            gap: 2,
            gridTemplateColumns: { xs: '1fr', md: 'minmax(0, 1fr) 400px' },
            alignItems: 'start',
          }}
        >
          {phone ? (
            <NodeList
              label={t('wf.nodes')}
              items={items}
              parents={(nid) => draft.edges.filter((e) => e.to === nid).map((e) => titleOf(e.from))}
              selectedId={selectedNode?.id ?? null}
              onSelect={(nid) => setSelection({ kind: 'node', id: nid })}
            />
          ) : (
            <WorkflowGraph
              label={t('wf.graphLabel', { name: draft.name || t('wf.new') })}
              items={items}
              edges={draft.edges}
              selection={selection}
              onSelect={setSelection}
              onConnect={readOnly ? undefined : onConnect}
              onDelete={readOnly ? undefined : remove}
              invalidEdges={invalidEdges}
              height="calc(100vh - 240px)"
            />
          )}
          <Paper ref={panelRef} variant="outlined" sx={{ p: 2, minWidth: 0 }}>
            {selection && (
              <Button size="small" onClick={() => setSelection(null)} sx={{ mb: 1 }}>
                {t('wf.backToSettings')}
              </Button>
            )}
            <Box inert={readOnly && !!selection}>{panel}</Box>
          </Paper>
        </Box>
      </PageBody>
      {running && saved && <StartRunDialog workflow={saved} onClose={() => setRunning(false)} />}
    </>
  );
}
