import { defineRoute } from '../../core/http/route.ts';
import { authorizationCompletedResponse, callbackQuery, providerParams } from '../oauth.schema.ts';
import { completeAuthorization } from '../oauth.service.ts';

/** Public: the provider redirects the user's browser here, and the state says whose account it is. */
export default defineRoute({
  response: authorizationCompletedResponse,
  params: providerParams,
  query: callbackQuery,
  run: (ctx) => completeAuthorization(ctx, ctx.params.provider, ctx.query, ctx.ports),
});
