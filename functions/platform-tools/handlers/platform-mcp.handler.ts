import * as z from 'zod';
import { jsonRpcBody } from '../../core/http/json-rpc-error.ts';
import { defineRoute } from '../../core/http/route.ts';
import { serverNameSchema } from '../../mcp/mcp.schema.ts';
import { servePlatformMcp } from '../platform-mcp.service.ts';

/** `?servers=a,b`: the hosted servers whose tools `tools/list` shows (default: the newest of the caller's). */
const platformMcpQuery = z.object({
  servers: z
    .string()
    .transform((list) =>
      list
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name.length > 0),
    )
    .pipe(z.array(serverNameSchema).max(20, 'must name at most 20 servers'))
    .optional(),
});

/**
 * `POST` and `GET {mcp_url}/mcp/platform`: the platform's own MCP server. The body is checked as JSON-RPC
 * (`jsonRpcBody`), then goes to the SDK server as it came, and its answer comes back raw.
 */
export default defineRoute({
  body: jsonRpcBody,
  query: platformMcpQuery,
  run: (ctx) => servePlatformMcp(ctx, ctx.request, ctx.query.servers ?? null, ctx.ports),
});
