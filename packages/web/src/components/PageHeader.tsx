import { Box, Breadcrumbs, Link, Typography } from '@mui/material';
import type { ReactNode } from 'react';
import { Link as RouterLink } from 'react-router';

/** The bar a page's title stands in: a row that wraps, with a divider below. */
const headerBarSx = {
  display: 'flex',
  alignItems: 'center',
  gap: 1,
  px: { xs: 2, md: 3 },
  py: 2,
  flexWrap: 'wrap',
  borderBottom: 1,
  borderColor: 'divider',
  bgcolor: 'background.paper',
} as const;

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
    <Box sx={headerBarSx}>
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

/** A detail page's title row: a breadcrumb from the list page to the item's name, and its actions. */
export function DetailHeader({
  label,
  listLabel,
  listPath,
  title,
  actions,
}: {
  /** The breadcrumb's accessible name. */
  label: string;
  listLabel: string;
  listPath: string;
  title: string;
  actions?: ReactNode;
}) {
  return (
    <Box sx={headerBarSx}>
      <Breadcrumbs aria-label={label} sx={{ flex: '1 1 auto', minWidth: 0, '& ol': { flexWrap: 'wrap' } }}>
        <Link component={RouterLink} to={listPath} variant="h6" underline="hover">
          {listLabel}
        </Link>
        <Typography variant="h6" component="h1" sx={{ fontWeight: 700, wordBreak: 'break-word' }}>
          {title}
        </Typography>
      </Breadcrumbs>
      {actions}
    </Box>
  );
}
