import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { EditorLanguage, MountedEditor } from './codemirror.ts';

/**
 * A code field: CodeMirror (syntax highlighting, line numbers, problems marked at their lines),
 * loaded on first use; a plain textarea until it has loaded, or if it cannot. Problems are also
 * listed under the editor as text, so they never depend on seeing the gutter.
 */
export function CodeEditor(props: {
  label: string;
  value: string;
  onValue: (value: string) => void;
  language: EditorLanguage;
  problems?: readonly { line: number; message: string }[];
  readOnly?: boolean;
  hint?: string;
}) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<MountedEditor | null>(null);
  const [ready, setReady] = useState(false);
  const onValue = useRef(props.onValue);
  onValue.current = props.onValue;
  const problemsId = `${id}-problems`;
  const hintId = props.hint === undefined ? undefined : `${id}-hint`;

  useEffect(() => {
    let cancelled = false;
    import('./codemirror.ts').then(
      ({ mountEditor }) => {
        if (cancelled || host.current === null) return;
        editor.current = mountEditor(host.current, {
          value: props.value,
          language: props.language,
          label: props.label,
          describedBy: [hintId, problemsId].filter(Boolean).join(' '),
          readOnly: props.readOnly ?? false,
          onChange: (value) => onValue.current(value),
        });
        setReady(true);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, []);
  useEffect(() => editor.current?.setValue(props.value), [props.value, ready]);
  useEffect(() => editor.current?.mark(props.problems ?? []), [props.problems, ready]);

  return (
    <div class="field code-field">
      <label for={ready ? undefined : id} id={`${id}-label`}>
        {props.label}
      </label>
      <div ref={host} class="code-editor" data-ready={ready ? 'true' : 'false'} />
      {ready ? null : (
        <textarea
          id={id}
          class="code-fallback"
          spellcheck={false}
          rows={16}
          readOnly={props.readOnly}
          aria-describedby={[hintId, problemsId].filter(Boolean).join(' ')}
          value={props.value}
          onInput={(e) => props.onValue((e.currentTarget as HTMLTextAreaElement).value)}
        />
      )}
      {hintId === undefined ? null : (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      <ul class="problems" id={problemsId} aria-live="polite">
        {(props.problems ?? []).map((problem) => (
          <li key={`${problem.line}:${problem.message}`}>
            Line {problem.line}: {problem.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
