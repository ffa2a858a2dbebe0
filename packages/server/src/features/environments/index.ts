// The environments feature as other features may use it: everything else of it is its own.
export { insertSecretRow } from './environments.store';
