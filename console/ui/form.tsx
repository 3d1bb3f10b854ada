import type { ComponentChildren, JSX } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';

/**
 * A labelled control: the label is tied to the control, and the hint and the error are read with
 * it (`aria-describedby`). `children` receives the ids to put on the control.
 */
export function Field(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}) {
  const id = useId();
  const hintId = props.hint === undefined ? undefined : `${id}-hint`;
  const errorId = props.error === undefined ? undefined : `${id}-error`;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${props.error === undefined ? '' : ' field-invalid'}`}>
      <label for={id}>{props.label}</label>
      {props.children({ id, describedBy, invalid: props.error !== undefined })}
      {hintId === undefined ? null : (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {errorId === undefined ? null : (
        <p class="field-error" id={errorId}>
          {props.error}
        </p>
      )}
    </div>
  );
}

interface InputProps {
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'password' | 'email' | 'number' | 'url' | 'search' | 'datetime-local';
  placeholder?: string;
  required?: boolean;
  autoComplete?: string;
  spellcheck?: boolean;
  inputMode?: 'numeric' | 'text' | 'url' | 'email';
  min?: number;
  max?: number;
  maxLength?: number;
  name?: string;
  disabled?: boolean;
}

export function TextInput(props: { label: string; hint?: ComponentChildren; error?: string | undefined } & InputProps) {
  const { label, hint, error, value, onValue, ...rest } = props;
  return (
    <Field label={label} hint={hint} error={error}>
      {({ id, describedBy, invalid }) => (
        <input
          // Preact types each input `type` apart; this field passes through whichever the caller chose.
          {...(rest as JSX.IntrinsicElements['input'])}
          id={id}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={value}
          onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

export function TextArea(props: {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  value: string;
  onValue: (value: string) => void;
  rows?: number;
  required?: boolean;
  placeholder?: string;
  name?: string;
}) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {({ id, describedBy, invalid }) => (
        <textarea
          id={id}
          name={props.name}
          rows={props.rows ?? 4}
          required={props.required}
          placeholder={props.placeholder}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={props.value}
          onInput={(e) => props.onValue((e.currentTarget as HTMLTextAreaElement).value)}
        />
      )}
    </Field>
  );
}

export function Select(props: {
  label: string;
  hint?: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  options: readonly (string | { value: string; label: string })[];
  name?: string;
}) {
  return (
    <Field label={props.label} hint={props.hint}>
      {({ id, describedBy }) => (
        <select
          id={id}
          name={props.name}
          aria-describedby={describedBy}
          value={props.value}
          onChange={(e) => props.onValue((e.currentTarget as HTMLSelectElement).value)}
        >
          {props.options.map((option) => {
            const { value, label } = typeof option === 'string' ? { value: option, label: option } : option;
            return (
              <option value={value} key={value}>
                {label}
              </option>
            );
          })}
        </select>
      )}
    </Field>
  );
}

export function Checkbox(props: { label: string; checked: boolean; onChecked: (checked: boolean) => void; hint?: string }) {
  const id = useId();
  return (
    <div class="check">
      <input type="checkbox" id={id} checked={props.checked} onChange={(e) => props.onChecked((e.currentTarget as HTMLInputElement).checked)} />
      <label for={id}>{props.label}</label>
      {props.hint === undefined ? null : <span class="hint">{props.hint}</span>}
    </div>
  );
}

export function Button(
  props: JSX.IntrinsicElements['button'] & { variant?: 'primary' | 'secondary' | 'danger' | 'link'; busy?: boolean; type?: 'button' | 'submit' },
) {
  const { variant = 'secondary', busy, type = 'button', children, disabled, ...rest } = props;
  return (
    <button {...rest} type={type} class={`button button-${variant}`} disabled={Boolean(disabled) || busy} aria-busy={busy || undefined}>
      {children}
    </button>
  );
}

/** A form that never reloads the page; `onSubmit` gets the event's form already prevented. */
export function Form(props: { onSubmit: () => void | Promise<unknown>; children: ComponentChildren; label?: string; class?: string }) {
  return (
    <form
      class={props.class ?? 'form'}
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        void props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}

/**
 * A destructive action behind a confirmation: the first press asks (in the page, not a browser
 * dialog, so it is keyboard and screen-reader friendly), the second does it.
 */
export function ConfirmButton(props: { label: string; confirm: string; onConfirm: () => void | Promise<unknown>; busy?: boolean }) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  if (!asking)
    return (
      <Button
        variant="danger"
        onClick={() => {
          setAsking(true);
          queueMicrotask(() => yes.current?.focus());
        }}
      >
        {props.label}
      </Button>
    );
  return (
    <span class="confirm" role="group" aria-label={props.confirm}>
      <span>{props.confirm}</span>
      <button
        ref={yes}
        type="button"
        class="button button-danger"
        disabled={props.busy}
        onClick={() => {
          setAsking(false);
          void props.onConfirm();
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <Button onClick={() => setAsking(false)}>Cancel</Button>
    </span>
  );
}

/**
 * A secret the API shows once (a new token, an embed token): shown with a copy button and a
 * warning, and never stored by the console.
 */
export function SecretOnce(props: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="note note-warning secret-once" role="status">
      <strong>{props.label}</strong>
      <p>Copy it now: it is shown only this once.</p>
      <div class="secret-row">
        <code class="secret-value">{props.value}</code>
        <Button
          onClick={() =>
            void navigator.clipboard?.writeText(props.value).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </Button>
      </div>
    </div>
  );
}
