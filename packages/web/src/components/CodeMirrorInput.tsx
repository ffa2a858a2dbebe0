import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';
import { StreamLanguage } from '@codemirror/language';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import CodeMirror, { EditorView } from '@uiw/react-codemirror';
import { useMemo } from 'react';

export type EditorMode = 'json' | 'ini' | 'yaml' | 'text';

const modes = {
  json: () => [json()],
  yaml: () => [yaml()],
  ini: () => [StreamLanguage.define(properties)],
  text: () => [],
};

/**
 * The CodeMirror 6 editor inside a `CodeEditor`: its own chunk (about 440 kB of script), loaded when a form first
 * shows an editor rather than with every page that can open such a form.
 */
export default function CodeMirrorInput({
  labelId,
  value,
  onChange,
  mode,
  dark,
  readOnly,
  minHeight,
}: {
  labelId: string;
  value: string;
  onChange: (value: string) => void;
  mode: EditorMode;
  dark: boolean;
  readOnly?: boolean;
  minHeight: number;
}) {
  const extensions = useMemo(
    () => [
      ...modes[mode](),
      EditorView.lineWrapping,
      EditorView.contentAttributes.of({ 'aria-labelledby': labelId, 'aria-multiline': 'true' }),
    ],
    [mode, labelId],
  );
  return (
    <CodeMirror
      value={value}
      onChange={onChange}
      theme={dark ? 'dark' : 'light'}
      extensions={extensions}
      readOnly={readOnly}
      indentWithTab={false}
      basicSetup={{ tabSize: 2, foldGutter: false, highlightActiveLine: false }}
      minHeight={`${minHeight}px`}
      maxHeight="50vh"
    />
  );
}
