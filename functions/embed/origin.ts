/**
 * Whether a page's `Origin` may use an embed token (SPEC 4.10): an entry is a host (any port), a
 * host with a port, `*.domain` (its subdomains, not the domain itself) or `*`. Hosts compare
 * case-insensitively; the scheme is not part of the match (the token is publishable anyway: the
 * check keeps other sites from spending the owner's credits through their own pages).
 */
export function originAllowed(origin: string | undefined, allowedDomains: readonly string[]): boolean {
  if (allowedDomains.includes('*')) return true;
  if (origin === undefined || origin === '' || origin === 'null') return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const host = url.hostname.toLowerCase();
  const port = url.port;
  return allowedDomains.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry);
    const pattern = match?.[1] ?? entry;
    const wantedPort = match?.[2];
    if (wantedPort !== undefined && wantedPort !== (port || (url.protocol === 'https:' ? '443' : '80'))) return false;
    if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
    return host === pattern;
  });
}

/**
 * The origin of the page asking, to check with {@link originAllowed}. Browsers leave `Origin` off a
 * same-origin GET, so a page on the API's own origin (the local console, whose widget preview
 * loads the configuration from there) sends none; the browser's `Sec-Fetch-Site: same-origin`,
 * which no page script can set, then says the page is on the API's own origin.
 */
export function pageOrigin(headers: Readonly<Record<string, string | undefined>>, baseUrl: string): string | undefined {
  const origin = headers['origin'];
  if (origin !== undefined && origin !== '') return origin;
  return headers['sec-fetch-site'] === 'same-origin' ? new URL(baseUrl).origin : undefined;
}
