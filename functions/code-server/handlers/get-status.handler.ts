import { defineRoute } from '../../core/http/route.ts';
import { codeServerResponse } from '../code-server.schema.ts';
import { getStatus } from '../code-server.service.ts';

export default defineRoute({
  response: codeServerResponse,
  run: (ctx) => getStatus(ctx, ctx.ports),
});
