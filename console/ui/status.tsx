import type { ComponentChildren } from 'preact';
import { PlatformApiError } from '../../clients/typescript/src/index.ts';

/** An error as the API gave it: its message, code and request id (to find it in the logs). */
export function ErrorNote(props: { error: unknown; title?: string }) {
  if (props.error === undefined || props.error === null) return null;
  const error = props.error;
  const api = error instanceof PlatformApiError ? error : null;
  return (
    <div class="note note-error" role="alert">
      <strong>{props.title ?? (api ? `${api.code} (${api.status})` : 'Something went wrong')}</strong>
      <p>{error instanceof Error ? error.message : String(error)}</p>
      {api?.requestId === undefined ? null : (
        <p class="muted">
          Request <a href={`#/logs/${encodeURIComponent(api.requestId)}`}>{api.requestId}</a>
        </p>
      )}
    </div>
  );
}

export function Notice(props: { children: ComponentChildren; tone?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`note note-${props.tone ?? 'info'}`} role="status">
      {props.children}
    </div>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading{props.what === undefined ? '' : ` ${props.what}`}…
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** A short status word (`active`, `failed`, ...) with a colour that is never its only sign. */
export function Badge(props: { children: ComponentChildren; tone?: 'ok' | 'bad' | 'warn' | 'neutral' }) {
  return <span class={`badge badge-${props.tone ?? 'neutral'}`}>{props.children}</span>;
}

/** A timestamp (ISO or epoch ms) in the reader's locale, the exact value on hover. */
export function When(props: { at: string | number | null | undefined }) {
  if (props.at === null || props.at === undefined || props.at === '') return <span class="muted">never</span>;
  const date = new Date(props.at);
  if (Number.isNaN(date.getTime())) return <span>{String(props.at)}</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {date.toLocaleString()}
    </time>
  );
}

/** Any value as indented JSON. */
export function JsonView(props: { value: unknown; label?: string }) {
  return (
    <pre class="json" aria-label={props.label} tabIndex={0}>
      {JSON.stringify(props.value, null, 2)}
    </pre>
  );
}
