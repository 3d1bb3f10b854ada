import type { Config } from '../config.ts';

/** Where each public host of the platform is, as callers should be told (discovery, resource URLs). */
export interface PublicUrls {
  readonly baseUrl: string;
  readonly streamUrl: string;
  readonly mcpUrl: string;
  readonly voiceUrl: string;
  readonly cdnUrl: string;
  readonly siteUrl: string;
  readonly codeUrl: string;
}

/**
 * The platform's public URLs for one request: configured ones win; the others derive from the
 * base URL the request came in on (the cloud API's stage URL is known only from the request).
 * Resolved once by the pipeline, so services never see a raw request URL.
 */
export function publicUrls(config: Config, requestBaseUrl: string): PublicUrls {
  const baseUrl = config.BASE_URL ?? requestBaseUrl;
  return {
    baseUrl,
    streamUrl: config.STREAM_URL ?? baseUrl,
    mcpUrl: config.MCP_URL ?? baseUrl,
    voiceUrl: config.VOICE_URL ?? baseUrl.replace(/^http/, 'ws'),
    cdnUrl: config.CDN_URL ?? baseUrl,
    siteUrl: config.SITE_URL ?? baseUrl,
    codeUrl: config.CODE_URL ?? baseUrl,
  };
}
