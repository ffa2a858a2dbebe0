import { Box, Button } from '@mui/material';
import { useTranslation } from 'react-i18next';

/** Cancel and Create/Save, under the form. */
export function FormActions({
  editing,
  saving,
  onCancel,
}: {
  editing: boolean;
  saving: boolean;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  return (
    <Box sx={{ display: 'flex', justifyContent: 'flex-end', gap: 1, mt: 3 }}>
      <Button onClick={onCancel}>{t('common.cancel')}</Button>
      <Button type="submit" variant="contained" disabled={saving}>
        {editing ? t('common.save') : t('common.create')}
      </Button>
    </Box>
  );
}
