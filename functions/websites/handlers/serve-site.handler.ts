import { defineStreamRoute } from '../../core/http/route.ts';
import { serveSite } from '../serve-site.ts';

/** Every request of the site host: the file, its folder's index, the site's 404 page, or a redirect. */
export default defineStreamRoute({
  run: async ({ request, ports, urls }, stream) => {
    // Locally the site host itself tells sites apart by name; in the cloud the edge does (no SITE_URL
    // here) and hands this function the path form (lib/cloud/site-viewer-request.ts).
    const origins = ports.config.SITE_ALIAS_ORIGINS && urls.siteUrl !== undefined ? new URL(urls.siteUrl) : null;
    const response = await serveSite(request, ports, origins);
    stream.start(response.status, response.headers);
    if (response.text !== undefined && request.method !== 'HEAD') await stream.write(response.text);
    if (response.body !== null) for await (const chunk of response.body) await stream.write(chunk as Buffer);
  },
});
