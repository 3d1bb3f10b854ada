import { javascript } from '@codemirror/lang-javascript';
import { markdown } from '@codemirror/lang-markdown';
import { python } from '@codemirror/lang-python';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';

/**
 * CodeMirror for the console's code fields, in a chunk of its own: pages load it with their first
 * editor, so the console's first load does not carry it.
 */
/**
 * Token colours with at least 4.5:1 contrast on the editor's white background (CodeMirror's default
 * style has some below AA, e.g. `#e40` for template strings); replaces that default, which
 * `basicSetup` only uses when no other style is given.
 */
const READABLE = HighlightStyle.define([
  { tag: tags.keyword, color: '#7a1f9a' },
  { tag: [tags.atom, tags.bool, tags.null], color: '#1a3a9e' },
  { tag: [tags.number, tags.integer, tags.float], color: '#116329' },
  { tag: [tags.definition(tags.variableName), tags.function(tags.definition(tags.variableName))], color: '#0b4fb3' },
  { tag: [tags.typeName, tags.className, tags.namespace], color: '#085c5c' },
  { tag: tags.propertyName, color: '#1f4e8c' },
  { tag: [tags.string, tags.docString], color: '#9a1a1a' },
  { tag: [tags.special(tags.string), tags.regexp, tags.escape], color: '#8a3500' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: '#5e6673', fontStyle: 'italic' },
  { tag: tags.meta, color: '#404740' },
  { tag: tags.invalid, color: '#b3261e' },
  { tag: tags.heading, fontWeight: 'bold' },
  { tag: tags.strong, fontWeight: 'bold' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.link, textDecoration: 'underline' },
]);

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
        syntaxHighlighting(READABLE),
        language(options.language),
        lintGutter(),
        EditorState.readOnly.of(options.readOnly ?? false),
        // A tab stop, so the scrolling editor is reachable by keyboard (axe: scrollable-region-focusable).
        EditorView.contentAttributes.of({
          'aria-label': options.label,
          tabindex: '0',
          ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}),
        }),
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
