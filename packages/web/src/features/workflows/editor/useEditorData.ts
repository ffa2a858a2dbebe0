import type { Environment, Inventory, ProjectUser, Template } from '@signalbox/contracts';
import { useQuery } from '@tanstack/react-query';
import { api } from '../../../api/client';
import { useResourceList } from '../../../api/resources';

/** What the editor's forms choose from: the project's templates, inventories, environments and members. */
export function useEditorData(projectId: number) {
  const templates = useResourceList<Template>(projectId, 'templates');
  const inventories = useResourceList<Inventory>(projectId, 'inventory');
  const environments = useResourceList<Environment>(projectId, 'environment');
  const members = useQuery({
    queryKey: ['project', projectId, 'team', 'approvers'],
    queryFn: () => api<ProjectUser[]>(`/project/${projectId}/users?sort=name&order=asc`),
  });
  return {
    templates: templates.data ?? [],
    inventories: inventories.data ?? [],
    environments: environments.data ?? [],
    members: (members.data ?? []).map((m) => ({ user_id: m.user_id, name: m.name })),
    error: templates.error ?? inventories.error ?? environments.error ?? members.error,
  };
}
