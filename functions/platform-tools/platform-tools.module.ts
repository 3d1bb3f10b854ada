import { defineArea } from '../../lib/manifest/define.ts';
import { mcpEndpointRoutes } from '../mcp/mcp.module.ts';
import { SEARCH_LIBRARY_FILES } from '../search/partition-index.ts';

/**
 * The platform's own MCP server, `{mcp_url}/mcp/platform` (issue 29): the caller's knowledge search,
 * actions, skills and hosted MCP servers as MCP tools, each run by the service the direct endpoint
 * uses, so access, billing and usage records are the same as when the caller calls them directly.
 * An area of its own rather than a route of `mcp`: its function needs the actions, knowledge and
 * skills ports, which the hosted MCP endpoint's function has no business being granted.
 */
export const platformToolsArea = defineArea({
  name: 'platform-tools',
  routes: [
    // Like the hosted MCP endpoint (same per-caller allowance, 120-second gateway limit, JSON-RPC
    // errors), but never anonymous: every tool speaks for the caller. Role and run tokens may use it
    // (an agent's run calls it with its run token); agent-scoped credentials (embed visitors,
    // phone calls) are refused by the `role` rule, as on every route that is not a chat.
    ...mcpEndpointRoutes('/mcp/platform', 'platform-mcp', 'required'),
  ],
  uses: ['users', 'credits', 'keys', 'keysReader', 'usageLogs', 'compute', 'mcpRuntime', 'actions', 'mcpServers', 'skills', 'searchIndex', 'paidAccess'],
  // search_knowledge queries the search engine, whose libraries ship beside the bundle (partition-index.ts).
  runtimeFiles: SEARCH_LIBRARY_FILES,
});
