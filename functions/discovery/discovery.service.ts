import type { Config } from '../core/config.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';

/** Where each host of the platform lives, and the platform's version. */
export function discoveryDocument(config: Config, urls: PublicUrls) {
  return { ...urls, version: config.PLATFORM_VERSION };
}
