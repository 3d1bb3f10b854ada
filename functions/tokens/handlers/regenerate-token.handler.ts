import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { issuedTokenResponse, tokenIdParams } from '../token.schema.ts';
import { regenerateToken } from '../token.service.ts';

export default defineRoute({
  response: issuedTokenResponse,
  params: tokenIdParams,
  run: ({ actor, params, ports }) => regenerateToken(requireFullAccess(actor), params.tokenId, ports),
});
