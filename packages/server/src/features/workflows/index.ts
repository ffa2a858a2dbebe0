// The workflows feature as the composition root and other features use it.

export { checkGraph as checkWorkflowGraph } from './definition-check';
export { createWorkflowDriver, type WorkflowDriver } from './engine/driver';
export { startWorkflowRun } from './runs.service';
export { definitionText } from './workflows.store';
