import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listTokensQuery, tokenListResponse } from '../token.schema.ts';
import { listTokens } from '../token.service.ts';

export default defineRoute({
  response: tokenListResponse,
  query: listTokensQuery,
  run: ({ actor, query, ports }) => listTokens(requireFullAccess(actor), query, ports),
});
