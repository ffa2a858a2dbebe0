import { Navigate } from 'react-router';
import { useProjects } from '../api/session';
import { useProjectContext } from '../components/project-context';
import { Spinner } from '../components/states';
import { readPref } from '../lib/prefs';

/** `/`: the remembered project, else the first one; a user with zero projects goes to /project/new. */
export function HomeRedirect() {
  const projects = useProjects();
  if (projects.isPending) return <Spinner full={false} />;
  const list = projects.data ?? [];
  if (list.length === 0) return <Navigate to="/project/new" replace />;
  const remembered = Number(readPref('projectId'));
  const project = list.find((p) => p.id === remembered) ?? list[0];
  return <Navigate to={`/project/${project.id}/history`} replace />;
}

/** `/project/{id}` selects the project and opens its dashboard (History, or Activity for typed projects). */
export function ProjectIndexRedirect() {
  const { project } = useProjectContext();
  return <Navigate to={project.type ? 'activity' : 'history'} replace />;
}
