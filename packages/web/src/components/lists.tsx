import { Box, Paper, Stack, Tooltip, Typography, useMediaQuery } from '@mui/material';
import type { ReactElement, ReactNode } from 'react';

/** Lists show cards instead of tables below this width. */
export const PHONE_QUERY = '(max-width:600px)';
export const usePhone = () => useMediaQuery(PHONE_QUERY, { noSsr: true });

/** One line cut with an ellipsis; used on a table cell's content. */
export const oneLineSx = {
  display: 'block',
  overflow: 'hidden',
  textOverflow: 'ellipsis',
  whiteSpace: 'nowrap',
  minWidth: 0,
} as const;

/**
 * A table cell that shares the row's width: it may shrink below its content (which is then cut with an
 * ellipsis) down to nothing, so the table never grows wider than its frame.
 */
export const shrinkCellSx = (width: string) => ({ width, maxWidth: 0 }) as const;

/** A cell sized by its content and never cut (the expand button, a status chip, the actions). */
export const fitCellSx = { width: '1%', whiteSpace: 'nowrap' } as const;

/**
 * Text on one line, cut with an ellipsis; a tooltip shows all of it. `children` (a link, say) is rendered in
 * place of the plain text when given; it gets the one-line style.
 */
export function Truncated({
  text,
  children,
  mono,
}: {
  text: string;
  children?: ReactElement<{ sx?: object }>;
  mono?: boolean;
}) {
  const sx = { ...oneLineSx, ...(mono ? { fontFamily: 'monospace', fontSize: 13 } : {}) };
  return (
    <Tooltip title={text} describeChild placement="bottom-start" enterDelay={400}>
      {children ?? (
        <Box component="span" sx={sx}>
          {text}
        </Box>
      )}
    </Tooltip>
  );
}

/** A list of cards (the phone layout of a table), named like the table it replaces. */
export function CardList({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack component="ul" aria-label={label} spacing={1} sx={{ listStyle: 'none', m: 0, p: 0 }}>
      {children}
    </Stack>
  );
}

/**
 * A card of a CardList: a title row (title, then what sits at its right), then its lines. `data` sets data-*
 * attributes on the card (as a table row of the same item has them).
 */
export function Card({
  title,
  aside,
  children,
  data,
}: {
  title: ReactNode;
  aside?: ReactNode;
  children?: ReactNode;
  data?: Record<`data-${string}`, string>;
}) {
  return (
    <Paper component="li" variant="outlined" sx={{ p: 1.5, minWidth: 0 }} {...data}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, minWidth: 0 }}>
        <Box sx={{ flex: '1 1 auto', minWidth: 0, fontWeight: 600, overflowWrap: 'anywhere' }}>{title}</Box>
        {aside}
      </Box>
      {children}
    </Paper>
  );
}

/** A label and its value on one line of a card. */
export function CardLine({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Box sx={{ display: 'flex', gap: 1, mt: 0.5, minWidth: 0, alignItems: 'baseline' }}>
      <Typography variant="caption" color="text.secondary" sx={{ flex: '0 0 auto', minWidth: 88 }}>
        {label}
      </Typography>
      <Box sx={{ flex: '1 1 auto', minWidth: 0, fontSize: 14, overflowWrap: 'anywhere' }}>{children}</Box>
    </Box>
  );
}
