// What other features use of the templates feature: its query keys and queries, run labels and view mutations.
export { rerunLabelKey, runLabelKey, templateKeys, useTemplate, useViewMutations } from './api';
