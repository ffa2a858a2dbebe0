import AccessTimeIcon from '@mui/icons-material/AccessTime';
import DownloadIcon from '@mui/icons-material/Download';
import ErrorOutlineIcon from '@mui/icons-material/ErrorOutlineOutlined';
import KeyboardArrowDownIcon from '@mui/icons-material/KeyboardArrowDown';
import KeyboardArrowUpIcon from '@mui/icons-material/KeyboardArrowUp';
import SearchIcon from '@mui/icons-material/Search';
import VerticalAlignBottomIcon from '@mui/icons-material/VerticalAlignBottom';
import {
  Box,
  Button,
  Chip,
  IconButton,
  InputAdornment,
  Stack,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import { useTranslation } from 'react-i18next';
import { apiUrl } from '../../../api/client';
import type { LogSearch } from './useLogSearch';

/**
 * Above the log: search with match count and previous/next, the line count, the time column toggle, First error,
 * Follow, and Download.
 */
export function TaskLogToolbar({
  projectId,
  taskId,
  search,
  count,
  follow,
  onFollow,
  showTime,
  onShowTime,
  hasError,
  onFirstError,
}: {
  projectId: number;
  taskId: number;
  search: LogSearch;
  count: number;
  follow: boolean;
  onFollow: () => void;
  showTime: boolean;
  onShowTime: (show: boolean) => void;
  /** Whether a line reports a failure (First error is enabled). */
  hasError: boolean;
  onFirstError: () => void;
}) {
  const { t } = useTranslation();
  return (
    <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap', rowGap: 1 }}>
      <TextField
        size="small"
        placeholder={t('tasks.search')}
        value={search.query}
        onChange={(e) => search.setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && search.matchCount) {
            e.preventDefault();
            if (e.shiftKey) search.previous();
            else search.next();
          }
        }}
        slotProps={{
          htmlInput: { 'aria-label': t('tasks.search') },
          input: {
            startAdornment: (
              <InputAdornment position="start">
                <SearchIcon fontSize="small" />
              </InputAdornment>
            ),
          },
        }}
        sx={{ width: { xs: '100%', sm: 280 } }}
      />
      {search.appliedQuery && (
        <>
          <Typography variant="body2" color="text.secondary" aria-live="polite">
            {search.matchCount
              ? t('tasks.matchOf', { current: search.matchNumber, total: search.matchCount })
              : t('tasks.noMatches')}
          </Typography>
          <IconButton
            size="small"
            aria-label={t('tasks.previousMatch')}
            disabled={!search.matchCount}
            onClick={search.previous}
          >
            <KeyboardArrowUpIcon />
          </IconButton>
          <IconButton
            size="small"
            aria-label={t('tasks.nextMatch')}
            disabled={!search.matchCount}
            onClick={search.next}
          >
            <KeyboardArrowDownIcon />
          </IconButton>
        </>
      )}
      <Box sx={{ flex: 1 }} />
      <Chip size="small" variant="outlined" label={t('tasks.lines', { count })} />
      <Button
        size="small"
        color="error"
        startIcon={<ErrorOutlineIcon />}
        disabled={!hasError}
        onClick={onFirstError}
      >
        {t('taskLog.firstError')}
      </Button>
      <Tooltip title={t('taskLog.showTimes')}>
        <IconButton
          aria-label={t('taskLog.showTimes')}
          aria-pressed={showTime}
          color={showTime ? 'primary' : 'default'}
          onClick={() => onShowTime(!showTime)}
        >
          <AccessTimeIcon />
        </IconButton>
      </Tooltip>
      <Tooltip title={t('tasks.follow')}>
        <IconButton
          aria-label={t('tasks.follow')}
          aria-pressed={follow}
          color={follow ? 'primary' : 'default'}
          onClick={onFollow}
        >
          <VerticalAlignBottomIcon />
        </IconButton>
      </Tooltip>
      <Button
        component="a"
        href={apiUrl(`/project/${projectId}/tasks/${taskId}/raw_output`)}
        download={`task-${taskId}.log`}
        startIcon={<DownloadIcon />}
      >
        {t('tasks.download')}
      </Button>
    </Stack>
  );
}
