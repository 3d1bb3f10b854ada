import { defineRoute } from '../../core/http/route.ts';
import { logDetailResponse, requestIdParams } from '../log.schema.ts';
import { getLog } from '../log.service.ts';

export default defineRoute({
  response: logDetailResponse,
  params: requestIdParams,
  run: (ctx) => getLog(ctx, ctx.params.requestId, ctx.ports),
});
