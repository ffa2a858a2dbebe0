import { Alert, Box, Paper, Typography } from '@mui/material';
import type { TFunction } from 'i18next';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { resourceErrorText } from './messages';
import { useNotify } from './snackbar';

/** A form's or page's server error in a red alert, translated when the catalogue knows it. */
export function ErrorAlert({ error }: { error: unknown }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <Alert severity="error" role="alert" sx={{ mb: 2 }}>
      {resourceErrorText(error, t)}
    </Alert>
  );
}

const resourceNotifyText = (err: unknown, t: TFunction) =>
  typeof err === 'string' ? err : resourceErrorText(err, t);

/** Success and error snackbars of these screens (an error may be a message of its own). */
export const useResourceNotify = () => useNotify(resourceNotifyText);

/** The page body: padding that shrinks on phones, and a bordered table frame that scrolls sideways. */
export function PageBody({ children }: { children: ReactNode }) {
  return <Box sx={{ p: { xs: 1, md: 3 }, minWidth: 0 }}>{children}</Box>;
}

export function TableFrame({ children, empty }: { children: ReactNode; empty?: string | false }) {
  return (
    <Paper variant="outlined" sx={{ overflowX: 'auto', maxWidth: '100%' }}>
      {children}
      {empty && (
        <Typography color="text.secondary" sx={{ p: 4, textAlign: 'center' }}>
          {empty}
        </Typography>
      )}
    </Paper>
  );
}

/** The actions column stays in view while a wide table scrolls sideways on narrow screens. */
export const actionsSx = {
  position: 'sticky',
  right: 0,
  whiteSpace: 'nowrap',
  bgcolor: 'background.paper',
  boxShadow: (theme: { palette: { divider: string } }) => `inset 1px 0 0 ${theme.palette.divider}`,
} as const;

/** A column that only wide screens show (the edit dialog still has every field). */
export const wideOnlySx = { display: { xs: 'none', sm: 'table-cell' } } as const;
