import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { tokenIdParams, tokenResponse } from '../token.schema.ts';
import { getToken } from '../token.service.ts';

export default defineRoute({
  response: tokenResponse,
  params: tokenIdParams,
  run: ({ actor, params, ports }) => getToken(requireFullAccess(actor), params.tokenId, ports),
});
