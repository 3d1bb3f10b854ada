import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { serverIdBody } from '../mcp.schema.ts';
import { deleteServer } from '../mcp.service.ts';

export default defineRoute({
  body: serverIdBody,
  run: ({ actor, body, ports }) => deleteServer(requireUser(actor), body.serverId, ports),
});
