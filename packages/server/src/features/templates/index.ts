// The templates feature as other features may use it: everything else of it is its own.

export { driftScheduleRow } from './drift-check';
export { listTemplates } from './templates.service';
export { listTemplateRows } from './templates.store';
