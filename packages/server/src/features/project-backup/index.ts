// The project-backup feature as other features may use it: everything else of it is its own.
export { readBackup } from './backup';
export { checkBackup } from './backup-check';
export { restoreProject } from './restore';
