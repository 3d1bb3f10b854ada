import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { rollbackBody, rollbackResponse, serverIdParams } from '../mcp.schema.ts';
import { rollbackServer } from '../mcp.service.ts';

/** `POST /mcp-admin/{serverId}/rollback`: owner only; writes version latest+1 copying the target. */
export default defineRoute({
  response: rollbackResponse,
  params: serverIdParams,
  body: rollbackBody,
  run: ({ actor, params, body, ports }) => rollbackServer(requireUser(actor), params.serverId, body, ports),
});
