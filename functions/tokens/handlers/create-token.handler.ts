import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createTokenBody, issuedTokenResponse } from '../token.schema.ts';
import { createToken } from '../token.service.ts';

export default defineRoute({
  response: issuedTokenResponse,
  body: createTokenBody,
  run: ({ actor, body, ports }) => createToken(requireFullAccess(actor), body, ports),
});
