/**
 * `npm run docs:widget-screenshots`: starts a throwaway local platform, embeds an echo agent, opens
 * the widget on a sample page in Debian's Chromium in each size and saves `docs/widget-<size>.png`
 * (one exchange shown), so changes to the widget's look can be checked by eye.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createUser, startTestPlatform } from '../test/support/local-platform.ts';

const SIZES = ['compact', 'standard', 'large'] as const;
const repoRoot = new URL('../', import.meta.url).pathname;
const platform = await startTestPlatform();
const pages = createServer();
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const owner = await createUser(platform, { alias: 'demo-shop', credits: 1000 });
  const source = readFileSync(join(repoRoot, 'python-runtime/tests/fixtures/echo_agent.py'), 'utf8');
  const agent = await platform.api('POST', '/agent/create', {
    token: owner.token,
    body: { agentName: 'shop-helper', description: 'Demo', sourceCode: source },
  });
  const agentId = agent.body.data.agentId as string;
  const embed = await platform.api('POST', '/embed/create', {
    token: owner.token,
    body: { agentId, allowedDomains: ['127.0.0.1'], title: 'Shop Help', subtitle: 'Usually answers at once', greeting: 'Hi! How can I help you today?' },
  });
  const snippet = embed.body.data.snippet as string;
  let html = '';
  pages.on('request', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  for (const size of SIZES) {
    html = `<!doctype html><html><body style="margin:0;font-family:Georgia,serif;background:#f8fafc"><main style="padding:40px 48px"><h1>Demo shop</h1><p>Any page, one script tag.</p></main>${snippet.replace('></script>', ` data-size="${size}"></script>`)}</body></html>`;
    const page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
    await page.goto(`${origin}/${size}`);
    await page.waitForFunction(() => (globalThis as unknown as { ServiceWidget?: { isReady(): boolean } }).ServiceWidget?.isReady());
    await page.evaluate(() => (globalThis as unknown as { ServiceWidget: { open(): void } }).ServiceWidget.open());
    const input = page.locator('[data-service-widget]').getByRole('textbox', { name: 'Message' });
    await input.fill('Do you ship to Canada?');
    await input.press('Enter');
    await page.locator('[data-service-widget] .bubble.assistant').filter({ hasText: 'echo: Do you ship to Canada?' }).waitFor();
    await page.screenshot({ path: join(repoRoot, 'docs', `widget-${size}.png`) });
    console.log(`docs/widget-${size}.png`);
    await page.close();
  }
} finally {
  await browser.close();
  pages.close();
  await platform.stop({ removeData: true });
}
