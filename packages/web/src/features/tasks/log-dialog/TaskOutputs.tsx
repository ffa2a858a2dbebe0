import { Box, Link, Typography } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import type { Task } from '../api';

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * What the task published for later nodes (its outputs; a secret one by name only, its value masked) and the
 * workflow run that started it.
 */
export function TaskOutputs({ task }: { task: Task }) {
  const { t } = useTranslation();
  const outputs = Object.entries(task.outputs ?? {});
  const secrets = task.secret_outputs ?? [];
  if (outputs.length === 0 && secrets.length === 0 && !task.workflow_run_id) return null;
  return (
    <Box sx={{ display: 'flex', flexWrap: 'wrap', gap: 1.5, alignItems: 'baseline' }} data-task-outputs>
      {task.workflow_run_id && (
        <Typography variant="body2">
          <Link
            component={RouterLink}
            to={`/project/${task.project_id}/workflow-runs/${task.workflow_run_id}`}
          >
            {t('tasks.workflowRun', { id: task.workflow_run_id, node: task.workflow_node_id ?? '' })}
          </Link>
        </Typography>
      )}
      {(outputs.length > 0 || secrets.length > 0) && (
        <Box
          component="dl"
          aria-label={t('tasks.outputs')}
          sx={{ m: 0, display: 'flex', gap: 1.5, flexWrap: 'wrap' }}
        >
          <Typography variant="caption" color="text.secondary" component="span">
            {t('tasks.outputs')}
          </Typography>
          {outputs.map(([name, value]) => (
            <Box key={name} sx={{ display: 'flex', gap: 0.5, minWidth: 0 }}>
              <Typography component="dt" variant="body2" sx={{ fontWeight: 600 }}>
                {name}
              </Typography>
              <Typography
                component="dd"
                variant="body2"
                sx={{ m: 0, fontFamily: 'monospace', overflowWrap: 'anywhere' }}
              >
                {shown(value)}
              </Typography>
            </Box>
          ))}
          {secrets.map((name) => (
            <Box key={name} sx={{ display: 'flex', gap: 0.5 }}>
              <Typography component="dt" variant="body2" sx={{ fontWeight: 600 }}>
                {name}
              </Typography>
              <Typography component="dd" variant="body2" sx={{ m: 0 }} color="text.secondary">
                {t('tasks.secretOutput')}
              </Typography>
            </Box>
          ))}
        </Box>
      )}
    </Box>
  );
}
