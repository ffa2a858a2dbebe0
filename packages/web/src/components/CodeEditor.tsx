import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';
import { StreamLanguage } from '@codemirror/language';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import { Box, FormHelperText, FormLabel, useTheme } from '@mui/material';
import CodeMirror, { EditorView } from '@uiw/react-codemirror';
import { useId, useMemo } from 'react';

export type EditorMode = 'json' | 'ini' | 'yaml' | 'text';

const modes = {
  json: () => [json()],
  yaml: () => [yaml()],
  ini: () => [StreamLanguage.define(properties)],
  text: () => [],
};

/** A labelled CodeMirror 6 editor for JSON (two-space), INI or YAML text. */
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
  const extensions = useMemo(
    () => [
      ...modes[mode](),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-labelledby': `${id}-label`, 'aria-multiline': 'true' }),
    ],
    [mode, id],
  );
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
        <CodeMirror
          value={value}
          onChange={onChange}
          theme={theme.palette.mode === 'dark' ? 'dark' : 'light'}
          extensions={extensions}
          readOnly={readOnly}
          indentWithTab={false}
          basicSetup={{ tabSize: 2, foldGutter: false, highlightActiveLine: false }}
          minHeight={`${minHeight}px`}
          maxHeight="50vh"
        />
      </Box>
      {helperText && <FormHelperText error={error}>{helperText}</FormHelperText>}
    </Box>
  );
}
