// The keys feature as other features may use it: everything else of it is its own.
export { ensureNoneKey } from './keys.service';
export { findStoreKey } from './keys.store';
