// The option lists feature as other features may use it: everything else of it is its own.
export { entriesOf, findOptionListRow } from './option-lists.store';
