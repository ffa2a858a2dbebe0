// What other features use of the run dialog.
export { RunTaskDialog } from './RunTaskDialog';
