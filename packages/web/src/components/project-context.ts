import { can, type PermissionName, type Project, type ProjectRole } from '@signalbox/contracts';
import { createContext, useContext } from 'react';

export type ProjectContextValue = {
  project: Project;
  role: ProjectRole | '';
  permissions: number;
  can: (permission: PermissionName) => boolean;
};

export const ProjectContext = createContext<ProjectContextValue | null>(null);

/** The current project, its role and permission bits; only inside /project/{id}. */
export function useProjectContext(): ProjectContextValue {
  const value = useContext(ProjectContext);
  if (!value) throw new Error('useProjectContext outside a project route');
  return value;
}

export const useOptionalProject = () => useContext(ProjectContext);

export const makeCan = (permissions: number) => (permission: PermissionName) => can(permissions, permission);
