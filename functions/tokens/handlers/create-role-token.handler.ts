import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createRoleTokenBody, issuedRoleTokenResponse } from '../role-token.schema.ts';
import { createRoleToken } from '../role-token.service.ts';

export default defineRoute({
  response: issuedRoleTokenResponse,
  body: createRoleTokenBody,
  run: ({ actor, body, ports }) => createRoleToken(requireFullAccess(actor), body, ports),
});
