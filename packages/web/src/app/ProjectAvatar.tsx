import { Avatar } from '@mui/material';
import { avatarColor, initials } from './avatar';

export function ProjectAvatar({ name, index, size = 32 }: { name: string; index: number; size?: number }) {
  return (
    <Avatar
      sx={{
        bgcolor: avatarColor(index),
        color: '#fff',
        width: size,
        height: size,
        fontSize: size * 0.42,
        fontWeight: 700,
      }}
    >
      {initials(name)}
    </Avatar>
  );
}
