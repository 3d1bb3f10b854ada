import { defineRoute } from '../../core/http/route.ts';
import { requestIdParams } from '../log.schema.ts';
import { getLog } from '../log.service.ts';

export default defineRoute({
  params: requestIdParams,
  run: (ctx) => getLog(ctx, ctx.params.requestId, ctx.ports),
});
