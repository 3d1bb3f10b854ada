/**
 * `npm run docs:console-screenshots`: starts a throwaway local platform, fills one account with a
 * little of everything through the API (an agent and a chat, an action and a run, an MCP server in
 * two versions, a knowledge file, a site, a skill, a cron job, a channel, an embed, a stored key),
 * opens each console page in Debian's Chromium at desktop and phone width and saves
 * `docs/console/<page>-<width>.png`, so changes to the console's look can be checked by eye.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createUser, startTestPlatform } from '../test/support/local-platform.ts';
import { VIEWPORTS } from '../test/support/console-browser.ts';

// The browser global the init script uses there (this project's types are Node's).
declare const sessionStorage: { setItem(key: string, value: string): void };
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

const repoRoot = new URL('../', import.meta.url).pathname;
const out = join(repoRoot, 'docs', 'console');
const fixture = (name: string) => readFile(join(repoRoot, 'python-runtime/tests/fixtures', name), 'utf8');
const platform = await startTestPlatform();
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });

/** One call as the demo user; stops the script on any refusal, saying which. */
/** What the seeding reads from an answer: ids in `data`, the run's request id in `meta`. */
interface Answer {
  readonly data: Record<string, string>;
  readonly meta: { readonly requestId: string };
}

async function call(token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await platform.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
  return res.body as Answer;
}

try {
  await mkdir(out, { recursive: true });
  const user = await createUser(platform, { alias: 'demo', credits: 5000, email: 'demo@example.com' });
  const t = user.token;
  const agent = (
    await call(t, 'POST', '/agent/create', {
      agentName: 'support-bot',
      description: 'Answers questions about the shop',
      sourceCode: await fixture('tool_agent.py'),
    })
  ).data;
  await call(t, 'POST', `/agent/${agent.agentId}/chat`, { prompt: 'What is the weather in Paris?' });
  const action = (
    await call(t, 'POST', '/action/create', {
      actionName: 'weather',
      description: 'Weather by city',
      runtime: 'python3.12',
      category: 'utilities',
      status: 'active',
      parameters: [{ name: 'city', type: 'string', required: true }],
      sourceCode: 'def handler(event, context):\n    return {"statusCode": 200, "body": {"city": event["city"], "forecast": "sunny"}}\n',
    })
  ).data;
  const run = await call(t, 'POST', `/action/${action.actionId}`, { city: 'Paris' });
  const mcpSource = (greeting: string) =>
    `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');\nconst { z } = require('zod');\n\nexports.createMcpServer = function createMcpServer() {\n  const server = new McpServer({ name: 'weather', version: '1.0.0' });\n  server.registerTool('forecast', { description: 'Forecast for a city', inputSchema: { city: z.string(), days: z.number().int().optional() } }, async ({ city }) => ({\n    content: [{ type: 'text', text: \`${greeting} \${city}\` }],\n  }));\n  return server;\n};\n`;
  const mcp = (await call(t, 'POST', '/mcp-admin/create', { serverName: 'weather', description: 'Forecasts', sourceCode: mcpSource('Sunny in') })).data;
  await call(t, 'PUT', '/mcp-admin/update', { serverId: mcp.serverId, sourceCode: mcpSource('Rain in'), changeNote: 'Honest forecasts' });
  await call(t, 'POST', '/knowledge/upload', {
    fileName: 'returns.md',
    folder: 'policies',
    content: '# Returns\nItems can be returned within 30 days with the receipt.',
  });
  await call(t, 'POST', '/knowledge/upload', {
    fileName: 'shipping.md',
    folder: 'policies',
    content: '# Shipping\nWe ship to Canada and the EU within 5 days.',
  });
  await call(t, 'POST', '/website/upload', { fileName: 'index.html', content: '<!doctype html><h1>Demo shop</h1>' });
  await call(t, 'POST', '/website/upload', { fileName: 'style.css', content: 'h1 { color: teal }' });
  await call(t, 'POST', '/skills/create', {
    skillMd:
      '---\nname: release-notes\ndescription: Writes release notes from a list of changes.\n---\n# Release notes\n\n1. Group the changes by area.\n2. Lead with what users will notice.\n',
  });
  await call(t, 'POST', '/cron', {
    name: 'morning brief',
    agentId: agent.agentId,
    schedule: 'cron(0 8 * * ? *)',
    scheduleTimezone: 'Europe/Paris',
    inputMessage: 'Summarise the news',
  });
  await call(t, 'POST', '/channels', { name: 'support', platform: 'webhook', agentId: agent.agentId, platformConfig: { secret: 's3cret-value' } });
  await call(t, 'POST', '/embed/create', { agentId: agent.agentId, allowedDomains: ['shop.example.com'], title: 'Shop help' });
  await call(t, 'POST', '/keys/store', { serviceName: 'openai', apiKey: 'sk-demo-never-shown' });

  const pages: [name: string, path: string][] = [
    ['home', '/'],
    ['agents', '/agents'],
    ['agent-edit', `/agents/${agent.agentId}`],
    ['agent-chat', `/agents/${agent.agentId}/chat`],
    ['actions', '/actions'],
    ['action', `/actions/${action.actionId}`],
    ['mcp-servers', '/mcp'],
    ['mcp-server', `/mcp/${mcp.serverId}`],
    ['mcp-tools', `/mcp/${mcp.serverId}/tools`],
    ['knowledge', '/knowledge'],
    ['website', '/websites'],
    ['skills', '/skills'],
    ['cron', '/cron'],
    ['channels', '/channels'],
    ['embeds', '/embeds'],
    ['logs', '/logs'],
    ['log-detail', `/logs/${run.meta.requestId}`],
    ['account', '/account'],
  ];
  for (const viewport of ['desktop', 'phone'] as const) {
    const context = await browser.newContext({ viewport: VIEWPORTS[viewport] });
    await context.addInitScript((token) => sessionStorage.setItem('agent-platform-console.token', token), t);
    const page = await context.newPage();
    for (const [name, path] of pages) {
      await page.goto(`${platform.url}/console/#${path}`);
      await page.locator('main h1').first().waitFor();
      // Every call the page makes has answered, and CodeMirror (if any) has loaded.
      await page.waitForLoadState('networkidle');
      // ...and nothing on it still says it is loading (an MCP host's first start takes a moment).
      await page
        .waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? ''), undefined, { timeout: 20_000 })
        .catch(() => console.warn(`${name}: still loading after 20 s`));
      if (name === 'agent-chat') {
        // One exchange, streamed, with the agent's tool use shown.
        await page.getByLabel('Message', { exact: true }).fill('What is the weather in Paris?');
        await page.getByRole('button', { name: 'Send' }).click();
        // The Stop button is there while the reply streams.
        await page.getByRole('button', { name: 'Stop' }).waitFor();
        await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'detached', timeout: 60_000 });
      }
      const file = join(out, `${name}-${viewport}.png`);
      await page.screenshot({ path: file, fullPage: false });
      console.log(`docs/console/${name}-${viewport}.png`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  await platform.stop({ removeData: true });
}
