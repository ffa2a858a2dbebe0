// What other features use of the tasks feature: the task type and queries, and the status chip.
export { type Task, taskKeys, useTaskHistory } from './api';
export { TaskStatusChip } from './TaskStatusChip';
