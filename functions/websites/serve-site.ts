import type { Readable } from 'node:stream';
import type { BucketObjects } from '../core/files/bucket-objects.ts';
import { aliasSchema } from '../users/user.schema.ts';
import type { UserStore } from '../users/user.store.ts';
import { contentTypeOf } from './content-types.ts';
import type { SiteCache } from './site-cache.ts';
import { INDEX_FILE, NOT_FOUND_FILE, siteObjectKey } from './websites-paths.ts';

/** A request to the site host, as both wirings hand it over: the path still URL-encoded. */
export interface SiteRequest {
  readonly method: string;
  readonly path: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Kept on the redirect from the path form to a site's own origin. */
  readonly query?: Readonly<Record<string, string>>;
}

export interface SiteResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Null for HEAD, 301, 304 and plain-text answers given in `text`. */
  readonly body: Readable | null;
  readonly text?: string;
}

export interface SitePorts {
  readonly users: Pick<UserStore, 'getAliasClaim'>;
  readonly websiteObjects: Pick<BucketObjects, 'open'>;
  /** Locally, the files through a cache in memory (site-cache.ts); in the cloud CloudFront caches in front of this function. */
  readonly siteCache?: Pick<SiteCache, 'files'>;
}

/**
 * Files: a minute in browsers, a year in the CDN. Owners change files at any time and cannot reach
 * browsers' caches, so those stay short; the CDN's copy lives until the owner clears it with
 * POST /website/invalidate, which is what makes invalidation worth paying for.
 */
export const FILE_CACHE_CONTROL = 'public, max-age=60, s-maxage=31536000';

/** Misses are cached briefly everywhere: a file uploaded after a miss shows within a minute without an invalidation. */
export const MISS_CACHE_CONTROL = 'public, max-age=10, s-maxage=60';

const NOSNIFF = { 'x-content-type-options': 'nosniff' };

function plain(status: number, text: string, cacheControl = MISS_CACHE_CONTROL): SiteResponse {
  return {
    status,
    headers: { ...NOSNIFF, 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(text)), 'cache-control': cacheControl },
    body: null,
    text,
  };
}

/**
 * Redirects within a site are relative (`./about/`): the same answer is right on the site's own
 * origin (`/about` to `/about/`) and in the path form (`/alice/about` to `/alice/about/`), and in the
 * cloud the origin sees only the path form the edge rewrote (lib/cloud/site-viewer-request.ts).
 */
function redirect(location: string): SiteResponse {
  return { status: 301, headers: { ...NOSNIFF, location, 'cache-control': 'public, max-age=3600' }, body: null };
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A path segment as a file or folder name, or null when it could not be one of a site's (a 400). */
function decodeSegment(segment: string): string | null {
  let name: string;
  try {
    name = decodeURIComponent(segment).normalize('NFC');
  } catch {
    return null;
  }
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\\') || CONTROL.test(name)) return null;
  return name;
}

/** Whether `If-None-Match` names `etag` (weak comparison, as RFC 9110 asks for GET and HEAD). */
function matches(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (ifNoneMatch === undefined || etag === undefined) return false;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || strip(tag) === strip(etag));
}

/**
 * The request as a path-form path (`/{alias}/{path}`), or the answer to give instead. Without
 * `origins` the path is that already. With them (an origin per site: `origins` is the site host,
 * whose subdomains are the sites), a request on `{alias}.{site host}` is that alias's site and its
 * path is relative to it, whatever it holds (`alice.localhost/bob/x` is alice's `bob/x`); the path
 * form on any other name redirects to the site's own origin, so no site's page ever runs on a
 * shared origin, where it could read another site's storage and DOM.
 */
function locate(request: SiteRequest, origins: URL | null): { path: string } | SiteResponse {
  if (origins === null) return { path: request.path };
  const host = (request.headers['host'] ?? '').toLowerCase();
  const suffix = `.${origins.host}`;
  if (host.endsWith(suffix)) {
    const label = host.slice(0, -suffix.length);
    return aliasSchema.safeParse(label).success ? { path: `/${label}${request.path}` } : plain(404, 'Not found.\n');
  }
  const match = /^\/([^/]*)(.*)$/.exec(request.path);
  const alias = decodeSegment(match?.[1] ?? '');
  if (alias === null || !aliasSchema.safeParse(alias).success) return plain(404, 'Not found.\n');
  const query = new URLSearchParams(request.query ?? {}).toString();
  return redirect(`${origins.protocol}//${alias}.${origins.host}${match?.[2] || '/'}${query === '' ? '' : `?${query}`}`);
}

/**
 * Serves users' sites: the same function behind the local site port and the cloud's site function
 * (its CloudFront origin). `origins` is the site host when each site has an origin of its own
 * (`locate`); the rest works on the path form `/{alias}/{path}`. `/{alias}` redirects to `/{alias}/`;
 * a folder serves its `index.html` (and `dir` redirects to `dir/` when `dir/index.html` exists); a
 * missing file serves the site's `404.html` with status 404, else a plain 404. ETag and
 * If-None-Match give 304; HEAD reads the object's headers only.
 */
export async function serveSite(request: SiteRequest, ports: SitePorts, origins: URL | null = null): Promise<SiteResponse> {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return { ...plain(405, 'Method not allowed.\n'), headers: { ...plain(405, '').headers, allow: 'GET, HEAD' } };
  const located = locate(request, origins);
  if (!('path' in located)) return located;
  const segments = located.path.replace(/^\//, '').split('/');
  const [rawAlias = '', ...rest] = segments;
  const alias = decodeSegment(rawAlias);
  if (alias === null) return plain(404, 'Not found.\n');
  // The owner and the cache's catching up with writes already answered are independent.
  const [claim, objects] = await Promise.all([
    ports.users.getAliasClaim(alias),
    ports.siteCache?.files === undefined ? ports.websiteObjects : ports.siteCache.files(ports.websiteObjects),
  ]);
  if (claim === null) return plain(404, origins === null ? `No site at /${rawAlias}/.\n` : 'No site here.\n');
  if (rest.length === 0) return redirect(`./${rawAlias}/`);
  const folderRequest = rest[rest.length - 1] === '';
  const names = (folderRequest ? rest.slice(0, -1) : rest).map(decodeSegment);
  if (names.some((name) => name === null)) return plain(400, 'Bad request: the path is not one of a site file.\n');
  const relative = (names as string[]).join('/');
  const key = folderRequest ? `${relative}${relative === '' ? '' : '/'}${INDEX_FILE}` : relative;
  const head = method === 'HEAD';
  const object = await objects.open(siteObjectKey(claim.userId, key), { head });
  if (object !== null) {
    const headers: Record<string, string> = { ...NOSNIFF, 'cache-control': FILE_CACHE_CONTROL, ...(object.etag === undefined ? {} : { etag: object.etag }) };
    if (matches(request.headers['if-none-match'], object.etag)) {
      object.body?.destroy();
      return { status: 304, headers, body: null };
    }
    const type = contentTypeOf(key, object.contentType ?? 'application/octet-stream');
    return { status: 200, headers: { ...headers, 'content-type': type, 'content-length': String(object.size) }, body: object.body };
  }
  // `/about` naming a folder with an index: its canonical address ends with a slash.
  if (!folderRequest && (await objects.open(siteObjectKey(claim.userId, `${relative}/${INDEX_FILE}`), { head: true })) !== null)
    return redirect(`./${rest[rest.length - 1] ?? ''}/`);
  const page = await objects.open(siteObjectKey(claim.userId, NOT_FOUND_FILE), { head });
  if (page === null) return plain(404, 'Not found.\n');
  return {
    status: 404,
    headers: { ...NOSNIFF, 'cache-control': MISS_CACHE_CONTROL, 'content-type': contentTypeOf(NOT_FOUND_FILE), 'content-length': String(page.size) },
    body: page.body,
  };
}
