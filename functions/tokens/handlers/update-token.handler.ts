import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { updateTokenBody } from '../token.schema.ts';
import { renameToken } from '../token.service.ts';

export default defineRoute({
  body: updateTokenBody,
  run: ({ actor, body, ports }) => renameToken(requireFullAccess(actor), body, ports),
});
