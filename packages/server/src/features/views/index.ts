// The views feature as other features may use it: everything else of it is its own.
export { listViewRows } from './views.store';
