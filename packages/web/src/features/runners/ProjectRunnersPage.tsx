import { useProjectContext } from '../../components/project-context';
import { RunnerList } from './RunnerList';

/** The project's Runners tab (owners and admins: the dashboard shows it with updateProject). */
export default function ProjectRunnersPage() {
  const { project } = useProjectContext();
  return <RunnerList scope={{ projectId: project.id }} />;
}
