import { Box, Typography } from '@mui/material';
import type { ReactNode } from 'react';

/**
 * A page's title row with its actions on the right. The title keeps its natural width, so on a narrow screen
 * the actions wrap below it instead of squeezing it to an ellipsis.
 */
export function PageHeader({
  title,
  actions,
  before,
}: {
  title: string;
  actions?: ReactNode;
  before?: ReactNode;
}) {
  return (
    <Box
      sx={{
        display: 'flex',
        alignItems: 'center',
        gap: 1,
        px: { xs: 2, md: 3 },
        py: 2,
        flexWrap: 'wrap',
        borderBottom: 1,
        borderColor: 'divider',
        bgcolor: 'background.paper',
      }}
    >
      {before}
      <Typography variant="h5" component="h1" sx={{ fontWeight: 700, flex: '1 1 auto', minWidth: 0 }} noWrap>
        {title}
      </Typography>
      {actions && (
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap', ml: 'auto' }}>
          {actions}
        </Box>
      )}
    </Box>
  );
}
