import * as z from 'zod';
import { defineRoute, Reply } from '../../core/http/route.ts';
import { docsAsset } from '../reference.service.ts';

/** The viewer's files. The page names them with the viewer's version, so a day of caching is safe. */
export default defineRoute({
  params: z.object({ asset: z.string().max(100) }),
  async run({ params }) {
    const { body, contentType } = await docsAsset(params.asset);
    return Reply.raw(body, contentType, { headers: { 'cache-control': 'public, max-age=86400' } });
  },
});
