// The tasks feature as other features may use it (the MCP endpoint starts and reads tasks as the task API does).
export { outputBatches } from './task-output';
export { createTask } from './tasks.service';
