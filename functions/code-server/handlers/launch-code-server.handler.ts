import { defineRoute } from '../../core/http/route.ts';
import { launchBody, launchedResponse } from '../code-server.schema.ts';
import { launch } from '../code-server.service.ts';

export default defineRoute({
  response: launchedResponse,
  body: launchBody,
  run: (ctx) => launch(ctx, ctx.body, ctx.ports),
});
