import { defineStreamRoute } from '../../core/http/route.ts';
import { serveSite } from '../serve-site.ts';

/** Every request of the site host: the file, its folder's index, the site's 404 page, or a redirect. */
export default defineStreamRoute({
  run: async ({ request, ports }, stream) => {
    const response = await serveSite(request, ports);
    stream.start(response.status, response.headers);
    if (response.text !== undefined && request.method !== 'HEAD') await stream.write(response.text);
    if (response.body !== null) for await (const chunk of response.body) await stream.write(chunk as Buffer);
  },
});
