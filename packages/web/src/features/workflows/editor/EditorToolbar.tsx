import ApprovalIcon from '@mui/icons-material/HowToReg';
import TemplateIcon from '@mui/icons-material/PlayCircleOutlined';
import DelayIcon from '@mui/icons-material/Timer';
import { Box, Button, Typography } from '@mui/material';
import type { WorkflowNodeType } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';

const kinds: { type: WorkflowNodeType; icon: typeof TemplateIcon }[] = [
  { type: 'template', icon: TemplateIcon },
  { type: 'approval', icon: ApprovalIcon },
  { type: 'delay', icon: DelayIcon },
];

/** The Add buttons: a node of each kind, connected after the selected node when one is selected. */
export function EditorToolbar({
  onAdd,
  afterName,
}: {
  onAdd: (type: WorkflowNodeType) => void;
  afterName: string | null;
}) {
  const { t } = useTranslation();
  return (
    <Box
      role="toolbar"
      aria-label={t('wf.toolbar')}
      sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center', mb: 1.5 }}
    >
      {kinds.map(({ type, icon: Icon }) => (
        <Button key={type} variant="outlined" size="small" startIcon={<Icon />} onClick={() => onAdd(type)}>
          {t(`wf.add.${type}`)}
        </Button>
      ))}
      <Typography variant="caption" color="text.secondary">
        {afterName ? t('wf.add.after', { name: afterName }) : t('wf.add.help')}
      </Typography>
    </Box>
  );
}
