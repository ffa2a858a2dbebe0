/** Project permission bits. */
export const Permission = {
  runProjectTasks: 1,
  updateProject: 2,
  manageProjectResources: 4,
  manageProjectUsers: 8,
} as const;
export type PermissionName = keyof typeof Permission;

export const projectRoles = ['owner', 'manager', 'task_runner', 'guest'] as const;
export type ProjectRole = (typeof projectRoles)[number];

export const rolePermissions: Record<ProjectRole, number> = {
  owner: 15,
  manager: Permission.runProjectTasks | Permission.manageProjectResources,
  task_runner: Permission.runProjectTasks,
  guest: 0,
};

export const ALL_PERMISSIONS = 15;

export function can(mask: number, permission: PermissionName): boolean {
  return (mask & Permission[permission]) !== 0;
}
