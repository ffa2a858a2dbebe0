// What other features use of the tasks feature: the task type and queries, and the status chip.
export { type Task, taskKeys, useTaskHistory } from './api';
export { ApprovalActions, approvalKeys } from './approval-actions';
export { McpChip } from './McpChip';
export { TaskStatusChip } from './TaskStatusChip';
