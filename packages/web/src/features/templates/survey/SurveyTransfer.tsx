import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import DownloadIcon from '@mui/icons-material/Download';
import UploadFileIcon from '@mui/icons-material/UploadFile';
import { Alert, Box, Button, IconButton, List, ListItem, TextField, Tooltip } from '@mui/material';
import type { SurveyVar } from '@signalbox/contracts';
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormDialog } from '../../../components/FormDialog';
import { translateResourceMessage } from '../../../components/messages';
import { useResourceNotify } from '../../../components/ui';
import { exportSurvey, type ImportProblem, importSurvey } from './survey-transfer';

/** Export (download or copy) and import (paste or upload) of the whole survey as JSON. */
export function SurveyTransfer({
  vars,
  onImport,
}: {
  vars: SurveyVar[];
  onImport: (v: SurveyVar[]) => void;
}) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const [importing, setImporting] = useState(false);
  const download = () => {
    const url = URL.createObjectURL(new Blob([exportSurvey(vars)], { type: 'application/json' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'survey.json';
    a.click();
    URL.revokeObjectURL(url);
  };
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error(t('integrations.clipboardUnavailable'));
      await navigator.clipboard.writeText(exportSurvey(vars));
      notify.success(t('survey.transfer.copied'));
    } catch (err) {
      notify.error(t('integrations.copyFailed', { message: (err as Error).message || String(err) }));
    }
  };
  return (
    <Box sx={{ display: 'flex' }}>
      <Button size="small" startIcon={<UploadFileIcon />} onClick={() => setImporting(true)}>
        {t('survey.transfer.import')}
      </Button>
      <Tooltip title={t('survey.transfer.download')}>
        <span>
          <IconButton
            size="small"
            aria-label={t('survey.transfer.download')}
            onClick={download}
            disabled={vars.length === 0}
          >
            <DownloadIcon fontSize="small" />
          </IconButton>
        </span>
      </Tooltip>
      <Tooltip title={t('survey.transfer.copy')}>
        <span>
          <IconButton
            size="small"
            aria-label={t('survey.transfer.copy')}
            onClick={() => void copy()}
            disabled={vars.length === 0}
          >
            <ContentCopyIcon fontSize="small" />
          </IconButton>
        </span>
      </Tooltip>
      {importing && (
        <ImportDialog
          onClose={() => setImporting(false)}
          onImport={(next) => {
            onImport(next);
            setImporting(false);
            notify.success(t('survey.transfer.imported', { count: next.length }));
          }}
        />
      )}
    </Box>
  );
}

function ImportDialog({ onImport, onClose }: { onImport: (v: SurveyVar[]) => void; onClose: () => void }) {
  const { t } = useTranslation();
  const [text, setText] = useState('');
  const [problems, setProblems] = useState<ImportProblem[]>([]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    e.stopPropagation();
    const result = importSurvey(text);
    if ('problems' in result) setProblems(result.problems);
    else onImport(result.vars);
  };
  /** Where a problem is: "Variable 3, values", or the whole file. */
  const where = (path: string) => {
    const [index, field] = path.split('.');
    if (index === undefined || index === '' || !/^\d+$/.test(index)) return '';
    return field
      ? t('survey.transfer.atField', { n: Number(index) + 1, field })
      : t('survey.transfer.atVar', { n: Number(index) + 1 });
  };
  return (
    <FormDialog
      open
      formId="survey-import-form"
      title={t('survey.transfer.importTitle')}
      submitLabel={t('survey.transfer.import')}
      onSubmit={submit}
      onClose={onClose}
      maxWidth="md"
    >
      {problems.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }}>
          <List dense disablePadding aria-label={t('survey.transfer.problems')}>
            {problems.slice(0, 20).map((p, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the problems of one try, never reordered
              <ListItem key={i} disableGutters sx={{ display: 'list-item' }}>
                {where(p.path) && `${where(p.path)}: `}
                {translateResourceMessage(p.message, t, p.path.split('.').pop() || 'survey_vars')}
              </ListItem>
            ))}
          </List>
        </Alert>
      )}
      <TextField
        label={t('survey.transfer.json')}
        multiline
        minRows={8}
        maxRows={20}
        fullWidth
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          setProblems([]);
        }}
        helperText={t('survey.transfer.replaceHelp')}
        slotProps={{ htmlInput: { spellCheck: false, style: { fontFamily: 'monospace', fontSize: 13 } } }}
      />
      <Button component="label" size="small" startIcon={<UploadFileIcon />} sx={{ mt: 1 }}>
        {t('survey.transfer.upload')}
        <input
          type="file"
          accept="application/json,.json"
          hidden
          onChange={(e) => {
            const file = e.target.files?.[0];
            if (!file) return;
            void file.text().then((content) => {
              setText(content);
              setProblems([]);
            });
          }}
        />
      </Button>
    </FormDialog>
  );
}
