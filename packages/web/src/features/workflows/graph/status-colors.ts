import type { WorkflowEdgeCondition, WorkflowNodeStatus, WorkflowRunStatus } from '@signalbox/contracts';

/** The palette colour of a node's or run's status (as the task chips colour theirs). */
export type StatusColor = 'default' | 'primary' | 'success' | 'error' | 'warning' | 'info';

export const statusColor: Record<WorkflowNodeStatus | WorkflowRunStatus, StatusColor> = {
  pending: 'default',
  waiting: 'default',
  running: 'primary',
  waiting_approval: 'warning',
  success: 'success',
  failed: 'error',
  rejected: 'error',
  skipped: 'default',
  stopped: 'default',
};

/** An edge's colour by its condition. */
export const conditionColor: Record<WorkflowEdgeCondition, StatusColor> = {
  success: 'success',
  failure: 'error',
  always: 'info',
};
