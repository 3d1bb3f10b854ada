import type { Config } from '../core/config.ts';

/** Where each host of the platform lives. Configured URLs win; otherwise they derive from the base URL. */
export function discoveryDocument(config: Config, requestBaseUrl: string) {
  const baseUrl = config.BASE_URL ?? requestBaseUrl;
  return {
    baseUrl,
    streamUrl: config.STREAM_URL ?? baseUrl,
    mcpUrl: config.MCP_URL ?? baseUrl,
    voiceUrl: config.VOICE_URL ?? baseUrl.replace(/^http/, 'ws'),
    cdnUrl: config.CDN_URL ?? baseUrl,
    siteUrl: config.SITE_URL ?? baseUrl,
    codeUrl: config.CODE_URL ?? baseUrl,
    version: config.PLATFORM_VERSION,
  };
}
