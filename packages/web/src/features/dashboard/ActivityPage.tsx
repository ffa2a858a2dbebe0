import { useProjectContext } from '../../components/project-context';
import { EventLog } from '../activity';

/** Dashboard Activity: the project's event log (time, user, object, description), filtered and exportable. */
export default function ActivityPage() {
  const { project } = useProjectContext();
  return <EventLog key={project.id} scope={{ projectId: project.id }} />;
}
