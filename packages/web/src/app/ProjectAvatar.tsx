import { Avatar } from '@mui/material';
import { avatarColor, initials } from './avatar';

/** A project's initials on its colour (from its id, so it never changes with the list of projects). */
export function ProjectAvatar({
  project,
  size = 32,
}: {
  project: { id: number; name: string };
  size?: number;
}) {
  return (
    <Avatar
      data-project-avatar={project.id}
      sx={{
        bgcolor: avatarColor(project.id),
        color: '#fff',
        width: size,
        height: size,
        fontSize: size * 0.42,
        fontWeight: 700,
      }}
    >
      {initials(project.name)}
    </Avatar>
  );
}
