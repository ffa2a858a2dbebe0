import ApprovalIcon from '@mui/icons-material/HowToReg';
import TemplateIcon from '@mui/icons-material/PlayCircleOutlined';
import DelayIcon from '@mui/icons-material/Timer';
import { Box, Typography } from '@mui/material';
import type { WorkflowNodeStatus, WorkflowNodeType } from '@signalbox/contracts';
import { Handle, type Node, type NodeProps, Position } from '@xyflow/react';
import { NODE_HEIGHT, NODE_WIDTH } from './layout';
import { type StatusColor, statusColor } from './status-colors';

/** What the graph shows of a node: its title and one line about it; in a run, its status and elapsed time. */
export type GraphItem = {
  id: string;
  title: string;
  kind: WorkflowNodeType;
  detail: string;
  status?: WorkflowNodeStatus;
  statusLabel?: string;
  elapsed?: string;
  invalid?: boolean;
};

export type GraphNodeData = GraphItem & { connectable: boolean };
export type FlowNode = Node<GraphNodeData, 'workflow'>;

const icons = { template: TemplateIcon, approval: ApprovalIcon, delay: DelayIcon };

const paletteOf = (color: StatusColor) => (color === 'default' ? 'text.disabled' : `${color}.main`);

/** One node of the graph: a card with its kind's icon, title, detail and (in a run) a status stripe. */
export function GraphNode({ data, selected }: NodeProps<FlowNode>) {
  const Icon = icons[data.kind];
  const color = data.status ? paletteOf(statusColor[data.status]) : 'divider';
  return (
    <Box
      data-node-id={data.id}
      data-status={data.status}
      data-invalid={data.invalid ? 'true' : undefined}
      sx={{
        width: NODE_WIDTH,
        height: NODE_HEIGHT,
        boxSizing: 'border-box',
        bgcolor: 'background.paper',
        color: 'text.primary',
        border: 2,
        borderColor: data.invalid ? 'error.main' : selected ? 'primary.main' : 'divider',
        borderLeft: 8,
        borderLeftColor: data.invalid ? 'error.main' : color,
        borderRadius: 2,
        px: 1.25,
        py: 0.75,
        boxShadow: selected ? 4 : 1,
        display: 'flex',
        flexDirection: 'column',
        justifyContent: 'center',
        gap: 0.25,
      }}
    >
      <Handle type="target" position={Position.Top} isConnectable={data.connectable} />
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.75, minWidth: 0 }}>
        <Icon fontSize="small" sx={{ color: 'text.secondary', flexShrink: 0 }} />
        <Typography variant="body2" noWrap sx={{ fontWeight: 700, minWidth: 0 }}>
          {data.title}
        </Typography>
      </Box>
      <Typography variant="caption" color="text.secondary" noWrap>
        {data.detail}
      </Typography>
      {data.statusLabel && (
        <Typography variant="caption" noWrap sx={{ fontWeight: 600, color }}>
          {data.statusLabel}
          {data.elapsed ? ` · ${data.elapsed}` : ''}
        </Typography>
      )}
      <Handle type="source" position={Position.Bottom} isConnectable={data.connectable} />
    </Box>
  );
}
