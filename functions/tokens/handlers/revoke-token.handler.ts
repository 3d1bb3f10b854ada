import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { tokenIdBody, tokenRevokedResponse } from '../token.schema.ts';
import { revokeToken } from '../token.service.ts';

export default defineRoute({
  response: tokenRevokedResponse,
  body: tokenIdBody,
  run: ({ actor, body, ports }) => revokeToken(requireFullAccess(actor), body.tokenId, ports),
});
