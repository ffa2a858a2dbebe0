// What other features use of the views feature.
export { EditViewsDialog } from './EditViewsDialog';
