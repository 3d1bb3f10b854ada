import { defineRoute } from '../../core/http/route.ts';
import { getStatus } from '../code-server.service.ts';

export default defineRoute({
  run: (ctx) => getStatus(ctx, ctx.ports),
});
