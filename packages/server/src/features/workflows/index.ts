// The workflows feature as the composition root and other features use it.

export { checkGraph as checkWorkflowGraph } from './definition-check';
export { createWorkflowDriver, type WorkflowDriver } from './engine/driver';
export { getWorkflowRun, startWorkflowRun } from './runs.service';
export { listWorkflows } from './workflows.service';
export { definitionText } from './workflows.store';
