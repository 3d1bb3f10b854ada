import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { serverUpdatedResponse, updateServerBody } from '../mcp.schema.ts';
import { updateServer } from '../mcp.service.ts';

/** `PUT /mcp-admin/update`: a `sourceCode` writes version latest+1; other fields change in place. */
export default defineRoute({
  response: serverUpdatedResponse,
  body: updateServerBody,
  run: ({ actor, body, ports, urls }) => updateServer(requireUser(actor), body, ports, urls),
});
