import { requireFullAccess } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listRoleTokensQuery, roleTokenListResponse } from '../role-token.schema.ts';
import { listRoleTokens } from '../role-token.service.ts';

export default defineRoute({
  response: roleTokenListResponse,
  query: listRoleTokensQuery,
  run: ({ actor, query, ports }) => listRoleTokens(requireFullAccess(actor), query, ports),
});
