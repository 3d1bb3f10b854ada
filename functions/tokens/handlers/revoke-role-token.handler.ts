import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { revokeRoleTokenBody, roleTokenRevokedResponse } from '../role-token.schema.ts';
import { revokeRoleToken } from '../role-token.service.ts';

export default defineRoute({
  response: roleTokenRevokedResponse,
  body: revokeRoleTokenBody,
  run: ({ actor, body, ports }) => revokeRoleToken(requireFullAccess(actor), body.tokenId, ports),
});
