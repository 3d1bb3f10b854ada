import { defineRoute } from '../../core/http/route.ts';
import { setupBody, setupStartedResponse } from '../code-server.schema.ts';
import { setup } from '../code-server.service.ts';

export default defineRoute({
  response: setupStartedResponse,
  body: setupBody,
  run: (ctx) => setup(ctx, ctx.body.setupScript, ctx.ports),
});
