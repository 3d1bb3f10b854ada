import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { tokenResponse, updateTokenBody } from '../token.schema.ts';
import { renameToken } from '../token.service.ts';

export default defineRoute({
  response: tokenResponse,
  body: updateTokenBody,
  run: ({ actor, body, ports }) => renameToken(requireFullAccess(actor), body, ports),
});
