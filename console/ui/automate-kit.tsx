import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { dataOf, PlatformApiError, useApi, useLoad, type Api } from '../api.ts';
import { Button } from './form.tsx';

/** One page of a cursor-paged listing (`{..., nextCursor}`). */
export interface CursorPage<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

export interface CursorList<T> {
  /** Every item loaded so far (first page, then each "More"). */
  readonly items: readonly T[] | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  readonly hasMore: boolean;
  more(): void;
  /** Loads again from the first page (after a change the page made). */
  reload(): void;
}

/**
 * A listing paged by `nextCursor`: the first page when shown, the next one on `more()`. A reload
 * starts again from the first page; an answer a newer load replaced is ignored.
 */
export function useCursorList<T>(load: (api: Api, cursor: string | undefined) => Promise<CursorPage<T>>, deps: readonly unknown[] = []): CursorList<T> {
  const api = useApi();
  const [state, setState] = useState<{ items: readonly T[] | undefined; next: string | null; error: unknown; loading: boolean }>({
    items: undefined,
    next: null,
    error: undefined,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const fetchPage = useCallback(
    (cursor: string | undefined) => {
      const mine = ++latest.current;
      setState((s) => ({ ...s, loading: true, error: undefined }));
      load(api, cursor).then(
        (page) =>
          mine === latest.current &&
          setState((s) => ({
            items: cursor === undefined ? page.items : [...(s.items ?? []), ...page.items],
            next: page.nextCursor,
            error: undefined,
            loading: false,
          })),
        (error: unknown) => mine === latest.current && setState((s) => ({ ...s, error, loading: false })),
      );
    },
    [api, ...deps],
  );
  useEffect(() => fetchPage(undefined), [fetchPage, generation]);
  return {
    items: state.items,
    error: state.error,
    loading: state.loading,
    hasMore: state.next !== null,
    more: () => state.next !== null && fetchPage(state.next),
    reload: () => setGeneration((g) => g + 1),
  };
}

/** "More" under a cursor-paged table, while the API says there is more. */
export function MoreButton(props: { list: CursorList<unknown>; what: string }) {
  if (!props.list.hasMore) return null;
  return (
    <p class="more">
      <Button onClick={props.list.more} busy={props.list.loading}>
        More {props.what}
      </Button>
    </p>
  );
}

/**
 * The problems of a 400 by the field they name, so each is shown under its field. The API writes
 * them after its message as `field: problem`, separated by `; ` (`Invalid request body: name: must
 * not be empty; schedule: ...`, `Invalid schedule: ...: schedule: ...`).
 */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  if (!(error instanceof PlatformApiError) || error.status !== 400) return {};
  const out: Record<string, string> = {};
  const field = /(?:^|: |; )([a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*): /g;
  const starts = [...error.message.matchAll(field)];
  starts.forEach((match, i) => {
    // A problem runs to the separator before the next field, or to the end.
    const text = error.message.slice(match.index + match[0].length, starts[i + 1]?.index ?? error.message.length).trim();
    const name = match[1]!;
    out[name] = out[name] === undefined ? text : `${out[name]}; ${text}`;
  });
  return out;
}

/** A value to copy (a webhook URL): read-only, labelled, with a copy button. */
export function CopyField(props: { label: string; value: string; hint?: ComponentChildren }) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  return (
    <div class="field copy-field">
      <label for={id}>{props.label}</label>
      <div class="copy-row">
        <input
          id={id}
          readOnly
          value={props.value}
          aria-describedby={props.hint === undefined ? undefined : `${id}-hint`}
          onFocus={(e) => e.currentTarget.select()}
        />
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
      {props.hint === undefined ? null : (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
    </div>
  );
}

/** Facts about one resource as a description list. */
export function Facts(props: { items: readonly (readonly [string, ComponentChildren])[] }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export interface AgentChoice {
  readonly agentId: string;
  readonly agentName: string;
  readonly agentType: 'text' | 'bidi';
}

/** The caller's own active agents (the first 100), to pick a target from and to name ids with. */
export function useMyAgents() {
  return useLoad(async (api): Promise<AgentChoice[]> => {
    const data = await dataOf(api.client.GET('/agent/list', { params: { query: { visibility: 'all', status: 'active', limit: 100 } } }));
    return data.agents.map((a) => ({ agentId: a.agentId, agentName: a.agentName, agentType: a.agentType }));
  });
}

/** An agent's name if it is one of the caller's, else its id. */
export function agentLabel(agents: readonly AgentChoice[] | undefined, agentId: string | null): ComponentChildren {
  if (agentId === null) return <span class="muted">none</span>;
  const agent = agents?.find((a) => a.agentId === agentId);
  return agent === undefined ? <code>{agentId}</code> : <a href={`#/agents/${encodeURIComponent(agentId)}`}>{agent.agentName}</a>;
}

/** Lines or commas to a list (allowed senders, domains): trimmed, empty ones left out. */
export function listOf(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A latest failure as the API keeps it (`{at, code, message}`), or "none". */
export function LastError(props: { error: { at: string; code: string; message: string } | null }) {
  if (props.error === null) return <span class="muted">none</span>;
  return (
    <span class="last-error">
      <strong>{props.error.code}</strong>: {props.error.message}{' '}
      <span class="muted">
        (<time dateTime={props.error.at}>{new Date(props.error.at).toLocaleString()}</time>)
      </span>
    </span>
  );
}
