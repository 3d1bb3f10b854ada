import { javascript } from '@codemirror/lang-javascript';
import { markdown } from '@codemirror/lang-markdown';
import { python } from '@codemirror/lang-python';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';

/**
 * CodeMirror for the console's code fields, in a chunk of its own: pages load it with their first
 * editor, so the console's first load does not carry it.
 */
export type EditorLanguage = 'python' | 'javascript' | 'markdown' | 'json' | 'text';

export interface MountedEditor {
  setValue(value: string): void;
  /** Marks problems at their lines (1-based), e.g. the source checker's. */
  mark(problems: readonly { line: number; message: string }[]): void;
  destroy(): void;
}

function language(kind: EditorLanguage): Extension {
  if (kind === 'python') return python();
  if (kind === 'javascript' || kind === 'json') return javascript();
  if (kind === 'markdown') return markdown();
  return [];
}

export function mountEditor(
  parent: HTMLElement,
  options: { value: string; language: EditorLanguage; label: string; describedBy?: string; readOnly?: boolean; onChange(value: string): void },
): MountedEditor {
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.value,
      extensions: [
        basicSetup,
        language(options.language),
        lintGutter(),
        EditorState.readOnly.of(options.readOnly ?? false),
        EditorView.contentAttributes.of({ 'aria-label': options.label, ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}) }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setValue(value) {
      if (value !== view.state.doc.toString()) view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    },
    mark(problems) {
      const doc = view.state.doc;
      const diagnostics: Diagnostic[] = problems.map((problem) => {
        const line = doc.line(Math.min(Math.max(problem.line, 1), doc.lines));
        return { from: line.from, to: line.to, severity: 'error', message: problem.message };
      });
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    destroy: () => view.destroy(),
  };
}
