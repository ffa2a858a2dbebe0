import CloseIcon from '@mui/icons-material/Close';
import { Box, Checkbox, Drawer, FormControlLabel, FormGroup, IconButton, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { type OptionalColumn, optionalColumns } from './columns';

/** The column settings sheet: a checkbox per optional column. */
export function ColumnSettings({
  open,
  onClose,
  visible,
  toggle,
}: {
  open: boolean;
  onClose: () => void;
  visible: (c: OptionalColumn) => boolean;
  toggle: (c: OptionalColumn, on: boolean) => void;
}) {
  const { t } = useTranslation();
  return (
    <Drawer anchor="right" open={open} onClose={onClose}>
      <Box sx={{ width: 280, maxWidth: '100vw', p: 2 }} role="dialog" aria-labelledby="column-settings-title">
        <Box sx={{ display: 'flex', alignItems: 'center', mb: 1 }}>
          <Typography id="column-settings-title" variant="h6" sx={{ flex: 1 }}>
            {t('tpl.columns')}
          </Typography>
          <IconButton aria-label={t('common.close')} onClick={onClose}>
            <CloseIcon />
          </IconButton>
        </Box>
        <FormGroup>
          {optionalColumns.map((c) => (
            <FormControlLabel
              key={c}
              label={t(`tpl.col.${c}`)}
              control={<Checkbox checked={visible(c)} onChange={(e) => toggle(c, e.target.checked)} />}
            />
          ))}
        </FormGroup>
      </Box>
    </Drawer>
  );
}
