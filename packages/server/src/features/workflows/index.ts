// The workflows feature as the composition root and other features use it.
export { createWorkflowDriver, type WorkflowDriver } from './engine/driver';
export { startWorkflowRun } from './runs.service';
