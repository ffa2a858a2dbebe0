import { Box, FormHelperText, FormLabel, useTheme } from '@mui/material';
import { lazy, Suspense, useId } from 'react';

import type { EditorMode } from './CodeMirrorInput';

export type { EditorMode };

const CodeMirrorInput = lazy(() => import('./CodeMirrorInput'));

/** A labelled CodeMirror 6 editor for JSON (two-space), INI or YAML text; the editor itself loads on first use. */
export function CodeEditor({
  label,
  value,
  onChange,
  mode,
  error,
  helperText,
  minHeight = 160,
  readOnly,
  testId,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  mode: EditorMode;
  error?: boolean;
  helperText?: string;
  minHeight?: number;
  readOnly?: boolean;
  testId?: string;
}) {
  const theme = useTheme();
  const id = useId();
  return (
    <Box sx={{ my: 1 }} data-testid={testId}>
      <FormLabel id={`${id}-label`} error={error} sx={{ display: 'block', mb: 0.5, fontSize: 14 }}>
        {label}
      </FormLabel>
      <Box
        sx={{
          border: 1,
          borderColor: error ? 'error.main' : 'divider',
          borderRadius: 1,
          overflow: 'hidden',
          '&:focus-within': { outline: 2, outlineColor: 'primary.main', outlineStyle: 'solid' },
          '& .cm-editor': { fontSize: 13, minHeight },
          '& .cm-scroller': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace' },
        }}
      >
        {/* Until the editor's chunk has loaded, the box keeps the editor's height. */}
        <Suspense fallback={<Box sx={{ minHeight }} />}>
          <CodeMirrorInput
            labelId={`${id}-label`}
            value={value}
            onChange={onChange}
            mode={mode}
            dark={theme.palette.mode === 'dark'}
            readOnly={readOnly}
            minHeight={minHeight}
          />
        </Suspense>
      </Box>
      {helperText && <FormHelperText error={error}>{helperText}</FormHelperText>}
    </Box>
  );
}
