import { defineRoute } from '../../core/http/route.ts';
import { billingTickResponse, emptyBody } from '../code-server.schema.ts';
import { billingTick } from '../code-server.service.ts';

/** The operator's "tick now": the scheduled tick's work at the platform's current time. */
export default defineRoute({
  response: billingTickResponse,
  body: emptyBody,
  run: (ctx) => billingTick(ctx.ports.clock.now(), ctx.ports, ctx.log),
});
