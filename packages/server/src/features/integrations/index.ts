// The integrations feature as other features may use it: everything else of it is its own.
export { insertAlias } from './aliases.store';
export { insertExtractValue } from './extract-values.store';
export { insertMatcher } from './matchers.store';
