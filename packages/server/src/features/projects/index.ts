// The projects feature as other features may use it: everything else of it is its own.
export { canCreateProject, insertProject } from './projects.service';
export { findProject, listProjects, toProject } from './projects.store';
