import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { serverDeletedResponse, serverIdBody } from '../mcp.schema.ts';
import { deleteServer } from '../mcp.service.ts';

export default defineRoute({
  response: serverDeletedResponse,
  body: serverIdBody,
  run: ({ actor, body, ports }) => deleteServer(requireUser(actor), body.serverId, ports),
});
