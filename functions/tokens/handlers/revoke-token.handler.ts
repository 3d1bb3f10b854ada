import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { tokenIdBody } from '../token.schema.ts';
import { revokeToken } from '../token.service.ts';

export default defineRoute({
  body: tokenIdBody,
  run: ({ actor, body, ports }) => revokeToken(requireFullAccess(actor), body.tokenId, ports),
});
