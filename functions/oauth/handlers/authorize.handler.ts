import { defineRoute } from '../../core/http/route.ts';
import { authorizationStartedResponse, providerParams } from '../oauth.schema.ts';
import { startAuthorization } from '../oauth.service.ts';

/** Linking an account stores keys, so role tokens (which may not manage keys) are refused. */
export default defineRoute({
  response: authorizationStartedResponse,
  params: providerParams,
  run: (ctx) => startAuthorization(ctx, ctx.params.provider, ctx.ports),
});
