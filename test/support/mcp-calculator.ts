/** A CommonJS MCP server for the platform's tests: `add` adds two numbers, `which` names `label`, so the version that answered is recognisable. */
export function calculator(label: string): string {
  return `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'calculator', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  server.registerTool('which', { description: 'Names the version' }, async () => ({ content: [{ type: 'text', text: ${JSON.stringify(label)} }] }));
  return server;
};
`;
}
