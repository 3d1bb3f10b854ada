import { defineRoute } from '../../core/http/route.ts';
import { emptyBody } from '../code-server.schema.ts';
import { stop } from '../code-server.service.ts';

export default defineRoute({
  body: emptyBody,
  run: (ctx) => stop(ctx, ctx.ports),
});
