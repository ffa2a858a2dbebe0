// The built-in Terraform state backend, as other features use it (project backups).
export { allVersionsOf } from './states.store';
