import { useEffect, useState } from 'preact/hooks';

/**
 * Where the console is: the part of the URL after `#`, e.g. `#/agents/ag_1?tab=chat`. Hash routes
 * need no server rewrites, so the same files work from the local platform and from a CDN bucket.
 */
export interface Route {
  /** `/agents/ag_1` */
  readonly path: string;
  /** `['agents', 'ag_1']`, decoded. */
  readonly segments: readonly string[];
  readonly query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [rawPath = '/', rawQuery = ''] = hash.split('?', 2);
  const path = rawPath.startsWith('/') ? rawPath : `/${rawPath}`;
  return { path, segments: path.split('/').filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(rawQuery) };
}

/** The current route, re-rendering on every navigation. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

/** The href of a console path, segments encoded: `href('agents', id)` → `#/agents/ag%201`. */
export function href(...segments: readonly string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** Goes to a console path (as a link would). */
export function navigate(...segments: readonly string[]): void {
  location.hash = href(...segments).slice(1);
}
