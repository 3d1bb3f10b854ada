import { defineRoute } from '../../core/http/route.ts';
import { createServerBody, serverCreatedResponse } from '../mcp.schema.ts';
import { createServer } from '../mcp.service.ts';

/** `POST /mcp-admin/create`: loads the source (400 if it does not load), writes version 1. */
export default defineRoute({
  response: serverCreatedResponse,
  body: createServerBody,
  run: ({ actor, body, ports, urls }) => createServer(actor, body, ports, urls),
});
