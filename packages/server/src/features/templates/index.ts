// The templates feature as other features may use it: everything else of it is its own.

export { driftScheduleRow } from './drift-check';
export { listTemplateRows } from './templates.store';
export { templatesListJson } from './templates-list';
