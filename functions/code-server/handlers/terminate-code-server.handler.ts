import { defineRoute } from '../../core/http/route.ts';
import { emptyBody, terminatedResponse } from '../code-server.schema.ts';
import { terminate } from '../code-server.service.ts';

export default defineRoute({
  response: terminatedResponse,
  body: emptyBody,
  run: (ctx) => terminate(ctx, ctx.ports),
});
