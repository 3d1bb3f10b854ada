import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startTestPlatform, type TestPlatform } from './local-platform.ts';

// The browser globals the callbacks of page.evaluate use there (this project's types are Node's).
declare const document: any;
declare const sessionStorage: any;
declare const localStorage: any;

/** Debian's Chromium, which the console's browser tests drive (CI installs it). */
export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** The widths the console is checked and photographed at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** Where the console keeps the signed-in token (console/session.ts). */
const TOKEN_KEY = 'agent-platform-console.token';

export interface ConsoleHarness {
  readonly platform: TestPlatform;
  readonly browser: Browser;
  /** `http://127.0.0.1:<port>/console/` */
  readonly consoleUrl: string;
  /**
   * A new page (its own browser context: storage is never shared between users) signed in as
   * `token`, showing the console at `path` (`/agents`, the part after `#`), its first page loaded.
   */
  open(token: string, path?: string, viewport?: ViewportName): Promise<Page>;
  close(): Promise<void>;
}

/** The real local platform and one headless Chromium for a test file. */
export async function startConsoleHarness(options: Parameters<typeof startTestPlatform>[0] = {}): Promise<ConsoleHarness> {
  const platform = await startTestPlatform(options);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
    ],
  });
  const consoleUrl = `${platform.url}/console/`;
  return {
    platform,
    browser,
    consoleUrl,
    async open(token, path = '/', viewport = 'desktop') {
      const context = await browser.newContext({ viewport: VIEWPORTS[viewport] });
      await context.addInitScript(([key, value]) => sessionStorage.setItem(key, value), [TOKEN_KEY, token] as const);
      const page = await context.newPage();
      await page.goto(`${consoleUrl}#${path}`);
      await page.locator('main h1').first().waitFor();
      return page;
    },
    async close() {
      await browser.close();
      await platform.stop({ removeData: true });
    },
  };
}

/** The visible text and every attribute of the page, and what it keeps in its storage. */
export async function everythingThePageHolds(page: Page): Promise<string> {
  const html = await page.content();
  const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
  return html + storage;
}

/** Fails when any of `secrets` appears anywhere in the page or its storage. */
export async function expectNoSecrets(page: Page, secrets: readonly string[]): Promise<void> {
  const held = await everythingThePageHolds(page);
  for (const secret of secrets) expect(held.includes(secret), `the page holds a secret (${secret.slice(0, 6)}…)`).toBe(false);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * Runs axe-core (Deque's accessibility rules, WCAG 2.1 A and AA, colour contrast included) on the
 * page as it is now, and fails listing every violation with where it is.
 */
export async function expectAccessible(page: Page): Promise<void> {
  // Evaluated through the DevTools protocol, which the page's script-src does not govern.
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations;
  })) as AxeViolation[];
  const described = violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
  expect(described).toEqual([]);
}

/** Fails when the page is wider than its viewport (content that would scroll sideways at phone width). */
export async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}
