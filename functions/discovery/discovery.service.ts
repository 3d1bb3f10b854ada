import type { Config } from '../core/config.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';

/** Where each host of the platform lives, where its API is described, and the platform's version. */
export function discoveryDocument(config: Config, urls: PublicUrls) {
  return { ...urls, openApiUrl: `${urls.baseUrl}/openapi.json`, docsUrl: `${urls.baseUrl}/docs`, version: config.PLATFORM_VERSION };
}
