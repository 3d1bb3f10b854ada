import { defineRoute } from '../../core/http/route.ts';
import { setupBody } from '../code-server.schema.ts';
import { setup } from '../code-server.service.ts';

export default defineRoute({
  body: setupBody,
  run: (ctx) => setup(ctx, ctx.body.setupScript, ctx.ports),
});
