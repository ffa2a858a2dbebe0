// The built-in Terraform state backend, as other features use it (project backups).
export { importStates } from './states.service';
export { currentVersionsOf } from './states.store';
