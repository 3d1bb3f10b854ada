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
 */
export function publicUrls(config: Config, requestBaseUrl: string): PublicUrls {
  const baseUrl = config.BASE_URL ?? requestBaseUrl;
  return {
    baseUrl,
    streamUrl: config.STREAM_URL ?? baseUrl,
    mcpUrl: config.MCP_URL ?? baseUrl,
    ...(config.VOICE_URL !== undefined ? { voiceUrl: config.VOICE_URL } : {}),
    ...(config.CDN_URL !== undefined ? { cdnUrl: config.CDN_URL } : {}),
    ...(config.SITE_URL !== undefined ? { siteUrl: config.SITE_URL, siteUrlTemplate: siteUrlTemplate(config.SITE_URL, config.SITE_ALIAS_ORIGINS) } : {}),
    ...(config.CODE_URL !== undefined ? { codeUrl: config.CODE_URL } : {}),
  };
}
