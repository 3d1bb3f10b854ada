import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { createPlatformClient, dataOf, PlatformApiError, type PlatformClient } from '../clients/typescript/src/index.ts';

export { dataOf, PlatformApiError };

/** `GET /.well-known/platform.json`: where each host of the platform is. */
export async function discover(baseUrl: string) {
  return dataOf(createPlatformClient({ baseUrl }).GET('/.well-known/platform.json'));
}

/** Everything a page needs to call the API as the signed-in user. */
export interface Api {
  /** The typed client of the base host (every path, body and answer checked by the compiler). */
  readonly client: PlatformClient;
  readonly token: string;
  readonly hosts: Awaited<ReturnType<typeof discover>>;
  /** `fetch` with the user's token, for the hosts the typed client does not cover (streamed chat, MCP). */
  fetchAuthed(url: string, init?: RequestInit): Promise<Response>;
  signOut(): void;
}

export function createApi(baseUrl: string, token: string, hosts: Api['hosts'], signOut: () => void): Api {
  return {
    client: createPlatformClient({ baseUrl, token }),
    token,
    hosts,
    fetchAuthed: (url, init = {}) =>
      fetch(url, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), authorization: `Bearer ${token}` } }),
    signOut,
  };
}

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (api === null) throw new Error('useApi outside a signed-in console');
  return api;
}

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  /** Loads again (after a change the page made). */
  reload(): void;
}

/**
 * Loads with the API when the page shows and whenever `deps` change; a load that a newer one
 * replaced is ignored, so a slow answer never overwrites a newer one.
 */
export function useLoad<T>(load: (api: Api) => Promise<T>, deps: readonly unknown[] = []): Loaded<T> {
  const api = useApi();
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load(api).then(
      (data) => mine === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => mine === latest.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, [api, generation, ...deps]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

export interface Submitted<A extends unknown[], T> {
  run(...args: A): Promise<T | undefined>;
  readonly busy: boolean;
  readonly error: unknown;
  readonly result: T | undefined;
  clear(): void;
}

/** A change the user asked for (a form, a button): busy while it runs, its error kept to show. */
export function useSubmit<A extends unknown[], T>(submit: (api: Api, ...args: A) => Promise<T>): Submitted<A, T> {
  const api = useApi();
  const [state, setState] = useState<{ busy: boolean; error: unknown; result: T | undefined }>({ busy: false, error: undefined, result: undefined });
  // The latest `submit`, so a run sees the form's values of the render it was pressed in.
  const latest = useRef(submit);
  latest.current = submit;
  const run = useCallback(
    async (...args: A) => {
      setState({ busy: true, error: undefined, result: undefined });
      try {
        const result = await latest.current(api, ...args);
        setState({ busy: false, error: undefined, result });
        return result;
      } catch (error) {
        setState({ busy: false, error, result: undefined });
        return undefined;
      }
    },
    [api],
  );
  return { ...state, run, clear: () => setState({ busy: false, error: undefined, result: undefined }) };
}

/**
 * The problems a 400 lists (its message is `Invalid request body: a; b; c`), each as the API wrote
 * it, e.g. `sourceCode: line 3: imports of os are not allowed`.
 */
export function issuesOf(error: unknown): string[] {
  if (!(error instanceof PlatformApiError) || error.status !== 400) return [];
  const colon = error.message.indexOf(': ');
  return colon < 0 ? [] : error.message.slice(colon + 2).split('; ');
}

/** The problems of a 400 that name a line of `field`: what a code editor marks at that line. */
export function lineIssuesOf(error: unknown, field: string): { line: number; message: string }[] {
  return issuesOf(error).flatMap((issue) => {
    const match = new RegExp(`^${field}: line (\\d+): (.*)$`, 's').exec(issue);
    return match ? [{ line: Number(match[1]), message: match[2] ?? '' }] : [];
  });
}
