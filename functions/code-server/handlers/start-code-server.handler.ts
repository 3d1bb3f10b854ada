import { defineRoute } from '../../core/http/route.ts';
import { emptyBody, startedResponse } from '../code-server.schema.ts';
import { start } from '../code-server.service.ts';

export default defineRoute({
  response: startedResponse,
  body: emptyBody,
  run: (ctx) => start(ctx, ctx.ports),
});
