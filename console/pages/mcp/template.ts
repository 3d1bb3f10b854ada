/**
 * A new server's starting source: the guide's weather server (CommonJS, `createMcpServer()`
 * returning an `McpServer`), with a few argument types so the tool tester's form shows them. No
 * template literals: CodeMirror's default colour for them is below WCAG AA contrast.
 */
export const MCP_TEMPLATE = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool(
    'forecast',
    {
      description: 'Forecast for a city',
      inputSchema: {
        city: z.string().describe('City name'),
        days: z.number().int().min(1).max(7).optional().describe('How many days'),
        units: z.enum(['metric', 'imperial']).optional(),
      },
    },
    async ({ city, days = 1, units = 'metric' }) => ({
      // Your stored key "weather" is the environment variable WEATHER_KEY.
      content: [{ type: 'text', text: 'Sunny in ' + city + ' for ' + days + ' day(s), ' + units + ' units (key set: ' + Boolean(process.env.WEATHER_KEY) + ')' }],
    }),
  );
  return server;
};
`;
