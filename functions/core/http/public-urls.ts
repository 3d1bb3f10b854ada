import type { Config } from '../config.ts';

/**
 * Where each public host of the platform is, as callers should be told (discovery, resource URLs).
 * The API's hosts (base, MCP) and the streaming host are always there. The others exist only when
 * an area serves them (a route or a service on that host): both wirings configure their URL then
 * and only then (lib/local/platform.ts, lib/cloud), so an absent one is a host nothing answers on,
 * which discovery must not advertise.
 */
export interface PublicUrls {
  readonly baseUrl: string;
  readonly streamUrl: string;
  readonly mcpUrl: string;
  readonly voiceUrl?: string;
  readonly cdnUrl?: string;
  readonly siteUrl?: string;
  /**
   * Where one user's site is, `{alias}` standing for the alias: `http://{alias}.localhost:3001/`
   * (an origin per site), or `{site_url}/{alias}/` where the site host has no wildcard name.
   * Present with `siteUrl`; `siteUrlOf` fills it in.
   */
  readonly siteUrlTemplate?: string;
  readonly codeUrl?: string;
}

/**
 * The template of a site's URL: an origin of its own, `{alias}.` before the site host's name, when
 * the platform gives each site one (SITE_ALIAS_ORIGINS); else a path of the shared site host.
 */
export function siteUrlTemplate(siteUrl: string, aliasOrigins: boolean): string {
  if (!aliasOrigins) return `${siteUrl}/{alias}/`;
  const url = new URL(siteUrl);
  return `${url.protocol}//{alias}.${url.host}/`;
}

/** The public URL of `alias`'s site, or null when the platform serves no sites. */
export function siteUrlOf(urls: Pick<PublicUrls, 'siteUrl' | 'siteUrlTemplate'>, alias: string): string | null {
  if (urls.siteUrl === undefined) return null;
  return (urls.siteUrlTemplate ?? siteUrlTemplate(urls.siteUrl, false)).replace('{alias}', encodeURIComponent(alias));
}

/**
 * The platform's public URLs for one request: configured ones win; the API's and the streaming
 * host derive from the base URL the request came in on (the cloud API's stage URL is known only
 * from the request). Resolved once by the pipeline, so services never see a raw request URL.
 *
 * Behind a proxy the operator trusts (TRUST_FORWARDED_HEADERS) and without PUBLIC_URL, which wins,
 * the request's base URL is the one the proxy says it was sent to (a tunnel whose name changes per
 * run): every host URL on the local server's own origin (LOCAL_ORIGIN, which they derive from
 * unless set) moves to the request's, so all hosts stay on the one origin the caller used.
 */
export function publicUrls(config: Config, requestBaseUrl: string): PublicUrls {
  const at = onRequestOrigin(config, requestBaseUrl);
  const baseUrl = at(config.BASE_URL) ?? requestBaseUrl;
  const voiceUrl = at(config.VOICE_URL);
  const cdnUrl = at(config.CDN_URL);
  const siteUrl = at(config.SITE_URL);
  const codeUrl = at(config.CODE_URL);
  return {
    baseUrl,
    streamUrl: at(config.STREAM_URL) ?? baseUrl,
    mcpUrl: at(config.MCP_URL) ?? baseUrl,
    ...(voiceUrl !== undefined ? { voiceUrl } : {}),
    ...(cdnUrl !== undefined ? { cdnUrl } : {}),
    ...(siteUrl !== undefined ? { siteUrl, siteUrlTemplate: siteUrlTemplate(siteUrl, config.SITE_ALIAS_ORIGINS) } : {}),
    ...(codeUrl !== undefined ? { codeUrl } : {}),
  };
}

/** How a configured host URL reads for this request: unchanged, or moved to the request's origin (`publicUrls`). */
function onRequestOrigin(config: Config, requestBaseUrl: string): (url: string | undefined) => string | undefined {
  const unchanged = (url: string | undefined) => url;
  if (!config.TRUST_FORWARDED_HEADERS || config.PUBLIC_URL !== undefined || config.LOCAL_ORIGIN === undefined) return unchanged;
  const own = new URL(config.LOCAL_ORIGIN);
  const to = new URL(requestBaseUrl);
  if (to.origin === own.origin) return unchanged;
  // The voice host's WebSocket scheme follows the request's: wss behind an https tunnel.
  const webSocketScheme = to.protocol === 'https:' ? 'wss:' : 'ws:';
  return (url) => {
    if (url === undefined) return url;
    const parsed = new URL(url);
    const isWebSocket = parsed.protocol === 'ws:' || parsed.protocol === 'wss:';
    const asHttp = isWebSocket ? parsed.protocol.replace('ws', 'http') : parsed.protocol;
    if (asHttp !== own.protocol || parsed.host !== own.host) return url;
    const path = parsed.pathname === '/' ? '' : parsed.pathname;
    return `${isWebSocket ? webSocketScheme : to.protocol}//${to.host}${path}`;
  };
}

/**
 * Where runs (user code behind the egress proxy) reach the platform's base and MCP hosts: the
 * public URLs, except on the local platform, whose runs call its own origin (LOCAL_ORIGIN, where
 * both hosts are at the root). With PUBLIC_URL (a tunnel) their calls would otherwise leave the
 * machine and come back through the tunnel, slower and only while the tunnel is up.
 */
export function runUrlsOf(config: Pick<Config, 'LOCAL_ORIGIN'>, urls: PublicUrls): PublicUrls {
  return config.LOCAL_ORIGIN === undefined ? urls : { ...urls, baseUrl: config.LOCAL_ORIGIN, mcpUrl: config.LOCAL_ORIGIN };
}
