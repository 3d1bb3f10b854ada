import type { PublicUrls } from '../core/http/public-urls.ts';

/** The path of the platform's own MCP server on the MCP host. */
export const PLATFORM_MCP_PATH = '/mcp/platform';

/**
 * `{mcp_url}/mcp/platform`, as runs receive it (`SVC_PLATFORM_MCP_URL`). A file of its own, so the
 * agents and voice areas can name the address without bundling the server.
 */
export function platformMcpUrl(urls: Pick<PublicUrls, 'mcpUrl'>): string {
  return `${urls.mcpUrl}${PLATFORM_MCP_PATH}`;
}
