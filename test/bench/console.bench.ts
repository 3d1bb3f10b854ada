import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Page } from 'playwright-core';
import { buildConsole } from '../../lib/console/build-console.ts';
import { CHROMIUM } from '../support/console-browser.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import type { BenchModule } from './harness.ts';
import { measured, sized, versus } from './stats.ts';

// The browser global the init scripts use there (this project's types are Node's).
declare const sessionStorage: { setItem(key: string, value: string): void };

/** A slow laptop: Chromium's CPU slowed fourfold (DevTools' "4x slowdown"). */
const CPU_SLOWDOWN = 4;
const LOADS = 8;
const NAVIGATIONS = 5;
const PAGES = ['Agents', 'Actions', 'Logs', 'Account', 'Home'] as const;

async function slowed(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
}

/**
 * The web console in Chromium on a fourfold slowed CPU, against the local platform: a cold first
 * load (no cache) until the agents list shows, next to the platform's other browser page (the API
 * reference, Swagger UI) until its title shows; a navigation between pages until the new page's
 * heading shows, next to one API call from the page (what a navigation needs at least); and what
 * the first load downloads, gzipped, next to the reference page's viewer.
 */
export const consoleBench: BenchModule = {
  name: 'console',
  async run(context) {
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    context.defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'bench', credits: 1000 });
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    context.defer(() => browser.close());
    const consoleUrl = `${platform.url}/console/`;
    // The console is built on its first request; that is not what a visitor waits for.
    await fetch(consoleUrl);

    const coldLoad = async (url: string, ready: (page: Page) => Promise<unknown>, signedIn: boolean): Promise<number> => {
      const browserContext = await browser.newContext();
      if (signedIn) await browserContext.addInitScript((token) => sessionStorage.setItem('agent-platform-console.token', token), user.token);
      const page = await browserContext.newPage();
      await slowed(page);
      const started = performance.now();
      await page.goto(url);
      await ready(page);
      const elapsed = performance.now() - started;
      await browserContext.close();
      return elapsed;
    };
    context.progress(`console: ${LOADS} cold loads each of the console and the API reference, CPU ${CPU_SLOWDOWN}x slower`);
    const consoleLoads: number[] = [];
    const referenceLoads: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      consoleLoads.push(await coldLoad(`${consoleUrl}#/agents`, (page) => page.getByText('No agents').or(page.getByRole('table')).first().waitFor(), true));
      referenceLoads.push(await coldLoad(`${platform.url}/docs`, (page) => page.locator('.swagger-ui .info .title').waitFor({ timeout: 60_000 }), false));
    }

    context.progress(`console: ${NAVIGATIONS} rounds of ${PAGES.length} navigations`);
    const browserContext = await browser.newContext();
    await browserContext.addInitScript((token) => sessionStorage.setItem('agent-platform-console.token', token), user.token);
    const page = await browserContext.newPage();
    await slowed(page);
    await page.goto(`${consoleUrl}#/`);
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    const navigations: number[] = [];
    const apiCalls: number[] = [];
    for (let round = 0; round < NAVIGATIONS; round++) {
      for (const name of PAGES) {
        const started = performance.now();
        await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();
        await page.getByRole('heading', { level: 1, name }).waitFor();
        navigations.push(performance.now() - started);
        const callStarted = performance.now();
        await page.evaluate(async ([url, token]) => (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).text(), [
          `${platform.url}/user/info`,
          user.token,
        ] as const);
        apiCalls.push(performance.now() - callStarted);
      }
    }
    await browserContext.close();

    const files = await buildConsole();
    const gz = (body: string) => gzipSync(body, { level: 9 }).length;
    const shell = files.filter((f) => f.path === 'index.html' || f.path.startsWith('main-'));
    const require = createRequire(import.meta.url);
    const viewer = ['swagger-ui-bundle.js', 'swagger-ui.css'].map((name) => readFileSync(require.resolve(`swagger-ui-dist/${name}`), 'utf8'));
    const viewerRow = sized(
      'API reference viewer (Swagger UI), gzipped',
      viewer.map(gz).reduce((a, b) => a + b, 0),
    );
    const reference = measured('API reference, cold load to its title', referenceLoads);
    const apiCall = measured('one API call from the page (/user/info)', apiCalls);
    return [
      reference,
      versus(measured('console, cold load to the agents list', consoleLoads, { note: `CPU ${CPU_SLOWDOWN}x slower, no cache` }), reference),
      apiCall,
      versus(measured('console, navigation to the next page', navigations, { note: 'click to the new heading' }), apiCall),
      viewerRow,
      versus(
        sized(
          'console shell (page, main script, styles), gzipped',
          shell.map((f) => gz(f.body)).reduce((a, b) => a + b, 0),
        ),
        viewerRow,
      ),
      versus(
        sized(
          'console, every file, gzipped (CodeMirror included)',
          files.map((f) => gz(f.body)).reduce((a, b) => a + b, 0),
        ),
        viewerRow,
      ),
    ];
  },
};
