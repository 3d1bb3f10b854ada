import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { tokenIdParams } from '../token.schema.ts';
import { regenerateToken } from '../token.service.ts';

export default defineRoute({
  params: tokenIdParams,
  run: ({ actor, params, ports }) => regenerateToken(requireFullAccess(actor), params.tokenId, ports),
});
