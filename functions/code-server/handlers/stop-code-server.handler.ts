import { defineRoute } from '../../core/http/route.ts';
import { emptyBody, stoppedResponse } from '../code-server.schema.ts';
import { stop } from '../code-server.service.ts';

export default defineRoute({
  response: stoppedResponse,
  body: emptyBody,
  run: (ctx) => stop(ctx, ctx.ports),
});
