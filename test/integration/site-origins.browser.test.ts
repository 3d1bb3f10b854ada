/**
 * One origin per user's site (issue 30), in real Chromium (Debian's, driven by playwright-core)
 * against the running local platform: a page of one user's site tries to read another user's
 * storage and DOM, as the embed widget's visitor token is kept in a site's localStorage. Waits are
 * on conditions the page reaches, never on time.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

// The browser globals the callbacks of page.evaluate use there (this project's types are Node's).
declare const window: any;
declare const localStorage: any;

const CHROMIUM = '/usr/bin/chromium';

describe.skipIf(!existsSync(CHROMIUM))("users' sites in Chromium", () => {
  let platform: TestPlatform;
  let browser: Browser;

  const publish = async (alias: string, html: string) => {
    const user = await createUser(platform, { alias, credits: 10 });
    const uploaded = await platform.api('POST', '/website/upload', { token: user.token, body: { fileName: 'index.html', content: html } });
    expect(uploaded.status, uploaded.text).toBe(200);
    const info = await platform.api('GET', '/website/info', { token: user.token });
    return info.body.data.siteUrl as string;
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await platform?.stop({ removeData: true });
  });

  it("keeps one site's page out of another site's storage and DOM", async () => {
    // Prepare: B's page keeps a token in its storage, as the widget keeps its visitor token.
    const siteB = await publish(
      'origin-b',
      `<p id="secret">B's page</p><script>localStorage.setItem('visitorToken', 'token-of-b'); window.stored = true;</script>`,
    );
    // A's page frames B's and reads what it can of it once it has loaded.
    const siteA = await publish(
      'origin-a',
      `<body><script>
        function attempt(read) { try { return read(); } catch (error) { return 'blocked: ' + error.name; } }
        const frame = document.createElement('iframe');
        frame.src = ${JSON.stringify(siteB)};
        frame.onload = () => {
          window.result = {
            storage: attempt(() => frame.contentWindow.localStorage.getItem('visitorToken')),
            dom: attempt(() => frame.contentDocument.getElementById('secret').textContent),
          };
        };
        document.body.appendChild(frame);
      </script></body>`,
    );
    const context = await browser.newContext();
    const pageB = await context.newPage();
    await pageB.goto(siteB);
    await pageB.waitForFunction(() => window.stored === true);
    const pageA = await context.newPage();

    // Act
    await pageA.goto(siteA);
    await pageA.waitForFunction(() => window.result !== undefined);
    const result = (await pageA.evaluate(() => window.result)) as { storage: string; dom: string };
    const ownStorage = await pageB.evaluate(() => localStorage.getItem('visitorToken'));

    // Assess: the same-origin policy blocks both reads, while B's own page still has its token.
    expect(ownStorage).toBe('token-of-b');
    expect(result.storage).toBe('blocked: SecurityError');
    expect(result.dom).toMatch(/^blocked: /);
    expect(new URL(siteA).origin).not.toBe(new URL(siteB).origin);
    await context.close();
  });
});
