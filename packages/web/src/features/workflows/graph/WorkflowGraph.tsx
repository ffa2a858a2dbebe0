import '@xyflow/react/dist/style.css';
import { Box, useTheme } from '@mui/material';
import type { WorkflowEdge, WorkflowEdgeCondition } from '@signalbox/contracts';
import {
  Controls,
  type Edge,
  type EdgeChange,
  MarkerType,
  type NodeChange,
  type NodeMouseHandler,
  ReactFlow,
  useNodesInitialized,
  useReactFlow,
} from '@xyflow/react';
import { type KeyboardEvent, useEffect, useMemo, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { edgeKey } from '../editor/errors';
import { type FlowNode, type GraphItem, GraphNode } from './GraphNode';
import { layoutGraph } from './layout';
import { conditionColor } from './status-colors';

export type Selection = { kind: 'node'; id: string } | { kind: 'edge'; from: string; to: string } | null;

const nodeTypes = { workflow: GraphNode };
const fitViewOptions = { padding: 0.15, maxZoom: 1 };

/** Fits the graph into view again whenever nodes or edges come or go (not when only their states change). */
function FitOnChange({ signature }: { signature: string }) {
  const { fitView } = useReactFlow();
  const measured = useNodesInitialized();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the signature is what the fit follows
  useEffect(() => {
    if (measured) void fitView(fitViewOptions);
  }, [signature, measured, fitView]);
  return null;
}

/** The graph's words for screen readers and its zoom buttons, in the reader's language. */
function useAriaLabels() {
  const { t } = useTranslation();
  return useMemo(
    () => ({
      'node.a11yDescription.default': t('wf.graph.nodeHelp'),
      'node.a11yDescription.keyboardDisabled': t('wf.graph.nodeHelp'),
      'edge.a11yDescription.default': t('wf.graph.edgeHelp'),
      'controls.ariaLabel': t('wf.graph.controls'),
      'controls.zoomIn.ariaLabel': t('wf.graph.zoomIn'),
      'controls.zoomOut.ariaLabel': t('wf.graph.zoomOut'),
      'controls.fitView.ariaLabel': t('wf.graph.fitView'),
      'controls.interactive.ariaLabel': t('wf.graph.interactive'),
      'handle.ariaLabel': t('wf.graph.handle'),
    }),
    [t],
  );
}

/**
 * A workflow drawn with React Flow, laid out by dagre (positions are never edited by hand). Nodes and edges are
 * selectable by mouse and keyboard (Tab, then Enter); in the editor (`onConnect`) a node's bottom handle drags to
 * another node's top one, and Delete removes the selection (`onDelete`).
 */
export function WorkflowGraph({
  label,
  items,
  edges,
  selection,
  onSelect,
  onConnect,
  onDelete,
  onNodeClick,
  invalidEdges,
  height = 480,
}: {
  label: string;
  items: GraphItem[];
  edges: WorkflowEdge[];
  selection: Selection;
  onSelect: (selection: Selection) => void;
  onConnect?: (from: string, to: string) => void;
  onDelete?: (selection: NonNullable<Selection>) => void;
  onNodeClick?: (id: string) => void;
  invalidEdges?: Set<string>;
  height?: number | string;
}) {
  const { t } = useTranslation();
  const theme = useTheme();
  const ariaLabelConfig = useAriaLabels();
  const editable = !!onConnect;
  const positions = useMemo(() => layoutGraph(items, edges), [items, edges]);
  // React Flow forgets a node's measured size whenever it is handed a new node object, hides the node until it is
  // measured again, and can miss that second measurement when updates come quickly (a run's clock ticks every
  // second). Handing back the size it reported keeps every node measured, and so visible, across updates.
  const measured = useRef(new Map<string, { width: number; height: number }>());

  const nodes = useMemo<FlowNode[]>(
    () =>
      items.map((item) => ({
        id: item.id,
        type: 'workflow',
        position: positions.get(item.id) ?? { x: 0, y: 0 },
        measured: measured.current.get(item.id),
        data: { ...item, connectable: editable },
        selected: selection?.kind === 'node' && selection.id === item.id,
        ariaLabel: `${item.title}: ${item.detail}${item.statusLabel ? `, ${item.statusLabel}` : ''}`,
        deletable: !!onDelete,
      })),
    [items, positions, selection, editable, onDelete],
  );

  const flowEdges = useMemo<Edge[]>(
    () =>
      edges.map((e) => {
        const key = edgeKey(e.from, e.to);
        const invalid = invalidEdges?.has(key);
        const tone = conditionColor[e.condition as WorkflowEdgeCondition];
        const color = invalid
          ? theme.palette.error.main
          : tone === 'default'
            ? theme.palette.text.disabled
            : theme.palette[tone].main;
        const selected = selection?.kind === 'edge' && selection.from === e.from && selection.to === e.to;
        return {
          id: key,
          source: e.from,
          target: e.to,
          label: t(`wf.condition.${e.condition}`),
          selected,
          deletable: !!onDelete,
          ariaLabel: t('wf.edge.label', {
            from: items.find((i) => i.id === e.from)?.title ?? e.from,
            to: items.find((i) => i.id === e.to)?.title ?? e.to,
            condition: t(`wf.condition.${e.condition}`),
          }),
          style: {
            stroke: color,
            strokeWidth: selected ? 3 : 2,
            strokeDasharray: e.condition === 'always' ? '6 4' : undefined,
          },
          markerEnd: { type: MarkerType.ArrowClosed, color },
          labelStyle: { fill: theme.palette.text.primary, fontSize: 12 },
          labelBgStyle: { fill: theme.palette.background.paper },
          data: { condition: e.condition, invalid },
        };
      }),
    [edges, items, selection, invalidEdges, onDelete, theme, t],
  );

  const onNodesChange = (changes: NodeChange<FlowNode>[]) => {
    for (const c of changes) {
      if (c.type === 'select' && c.selected) onSelect({ kind: 'node', id: c.id });
      if (c.type === 'dimensions' && c.dimensions) measured.current.set(c.id, c.dimensions);
    }
  };
  const onEdgesChange = (changes: EdgeChange[]) => {
    for (const c of changes) {
      const edge = 'id' in c ? flowEdges.find((e) => e.id === c.id) : undefined;
      if (!edge) continue;
      if (c.type === 'select' && c.selected) onSelect({ kind: 'edge', from: edge.source, to: edge.target });
    }
  };
  const click: NodeMouseHandler<FlowNode> = (_event, node) => onNodeClick?.(node.id);
  // Delete acts only while the focus is in the graph, never on a key pressed in the settings beside it.
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!onDelete || (event.key !== 'Delete' && event.key !== 'Backspace')) return;
    const target = event.target as HTMLElement;
    if (target.closest('input, textarea, [contenteditable="true"]')) return;
    // The node the focus is on, else what is selected (an edge, say).
    const focused = target.closest<HTMLElement>('.react-flow__node')?.dataset.id;
    const doomed: Selection = focused ? { kind: 'node', id: focused } : selection;
    if (!doomed) return;
    event.preventDefault();
    onDelete(doomed);
  };

  return (
    <Box
      role="group"
      aria-label={label}
      data-testid="workflow-graph"
      onKeyDown={onKeyDown}
      sx={{
        height,
        minHeight: 320,
        border: 1,
        borderColor: 'divider',
        borderRadius: 1,
        bgcolor: 'background.default',
        '& .react-flow__edge-textbg': { fill: theme.palette.background.paper },
      }}
    >
      <ReactFlow
        nodes={nodes}
        edges={flowEdges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect ? (c) => c.source && c.target && onConnect(c.source, c.target) : undefined}
        onNodeClick={click}
        onPaneClick={() => onSelect(null)}
        nodesDraggable={false}
        nodesConnectable={editable}
        edgesFocusable
        deleteKeyCode={null}
        colorMode={theme.palette.mode}
        ariaLabelConfig={ariaLabelConfig}
        fitView
        fitViewOptions={fitViewOptions}
        minZoom={0.2}
      >
        <FitOnChange
          signature={`${items.map((i) => i.id).join(',')}|${edges.map((e) => `${e.from}>${e.to}`).join(',')}`}
        />
        <Controls showInteractive={false} />
      </ReactFlow>
    </Box>
  );
}
