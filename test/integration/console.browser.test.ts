import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/local-platform.ts';
import { CLIENT_ID, CLIENT_SECRET, FakeProvider } from '../support/oauth-provider.ts';
import {
  expectAccessible,
  expectNoSecrets,
  expectNoSidewaysScroll,
  HAS_CHROMIUM,
  startConsoleHarness,
  type ConsoleHarness,
} from '../support/console-browser.ts';

type User = Awaited<ReturnType<typeof createUser>>;

/**
 * The web console's shell, sign-in, home and account pages in real Chromium against the running
 * local platform. Waits are on what the page shows, never on time.
 */
describe.skipIf(!HAS_CHROMIUM)('console: shell, sign-in, home, account', () => {
  let harness: ConsoleHarness;
  let alice: User;
  let bob: User;

  const provider = new FakeProvider();

  beforeAll(async () => {
    // An OAuth provider that consents at once, as a user's click would (test/support/oauth-provider.ts).
    provider.autoConsent = true;
    await provider.start();
    harness = await startConsoleHarness({
      env: {
        OAUTH_PROVIDER_A_AUTHORIZE_URL: `${provider.url}/authorize`,
        OAUTH_PROVIDER_A_TOKEN_URL: `${provider.url}/token`,
        OAUTH_PROVIDER_A_CLIENT_ID: CLIENT_ID,
        OAUTH_PROVIDER_A_CLIENT_SECRET: CLIENT_SECRET,
      },
    });
    alice = await createUser(harness.platform, { alias: 'alice', credits: 700, email: 'alice@example.com' });
    bob = await createUser(harness.platform, { alias: 'bob', credits: 50 });
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
    await provider.stop();
  });

  it('serves the console with its security headers and config, and redirects /console to /console/', async () => {
    // Act
    const redirect = await fetch(`${harness.platform.url}/console`, { redirect: 'manual' });
    const index = await fetch(harness.consoleUrl);
    const config = await fetch(`${harness.consoleUrl}config.json`);
    // Assess
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/console/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const script = /src="\.\/(main-[A-Z0-9]+\.js)"/.exec(await index.text())?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${harness.consoleUrl}${script}`);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await config.json()).toMatchObject({ signIn: { kind: 'token' } });
  });

  it('refuses a wrong token on the sign-in page, signs in with a right one, and signs out', async () => {
    // Prepare
    const context = await harness.browser.newContext();
    const page = await context.newPage();
    await page.goto(harness.consoleUrl);
    // Act
    await page.getByLabel('API token').fill('svc_ut_not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Assess
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Not signed in');
    // Act
    await page.getByLabel('API token').fill(alice.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    expect(await page.locator('.user-name').textContent()).toContain('alice');
    await expectAccessible(page);
    // Act
    await page.getByRole('button', { name: 'Sign out' }).click();
    // Assess
    await page.getByLabel('API token').waitFor();
    await expectNoSecrets(page, [alice.token]);
    await context.close();
  });

  it('shows credits, this month’s usage and recent runs on the home page', async () => {
    // Prepare
    const action = await harness.platform.api('POST', '/action/python-128mb/inline-code', {
      token: alice.token,
      body: { code: 'def handler(event, context):\n    return {"statusCode": 200, "body": "{}"}\n' },
    });
    expect(action.status, action.text).toBe(200);
    // Act
    const page = await harness.open(alice.token, '/');
    // Assess
    await page.getByRole('table', { name: 'Recent runs' }).getByText('action').first().waitFor();
    await expect.poll(() => page.locator('.card').first().textContent()).toMatch(/Credits\s*\d/);
    await expect.poll(() => page.getByRole('table', { name: 'Usage by kind this month' }).textContent()).toContain('action');
    await expectAccessible(page);
    await page.context().close();
  });

  it('creates a token shown once, stores a key whose value never reaches the page, and revokes the token', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/account');
    const secretValue = 'sk-live-console-test-0123456789';
    // Act: a token
    const tokens = page.getByRole('form', { name: 'Create a token' });
    await tokens.getByLabel('Name').fill('laptop');
    await tokens.getByRole('button', { name: 'Create token' }).click();
    // Assess
    const shown = (await page.locator('.secret-once .secret-value').textContent()) ?? '';
    expect(shown).toMatch(/^svc_ut_/);
    await page.getByRole('table', { name: 'API tokens' }).getByText('laptop').waitFor();
    // Act: a key
    const keys = page.getByRole('form', { name: 'Store a key' });
    await keys.getByLabel('Service name').fill('openai');
    await keys.getByLabel('Value').fill(secretValue);
    await keys.getByRole('button', { name: 'Store key' }).click();
    // Assess
    await page.getByRole('table', { name: 'Stored keys' }).getByText('openai').waitFor();
    await expectNoSecrets(page, [secretValue]);
    const listed = await harness.platform.api('GET', '/keys/list', { token: alice.token });
    expect(listed.body.data.keys.map((k: { serviceName: string }) => k.serviceName)).toEqual(['openai']);
    // Act: revoke the new token
    const row = page.getByRole('table', { name: 'API tokens' }).getByRole('row').filter({ hasText: 'laptop' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    // Assess
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect((await harness.platform.api('GET', '/user/info', { token: shown })).status).toBe(401);
    // After a reload nothing shown once is there any more.
    await page.reload();
    await page.getByRole('table', { name: 'API tokens' }).waitFor();
    await expectNoSecrets(page, [shown, secretValue]);
    await expectAccessible(page);
    await page.context().close();
  });

  it('shows a user only their own tokens and keys', async () => {
    // Act
    const page: Page = await harness.open(bob.token, '/account');
    await page.getByRole('table', { name: 'API tokens' }).getByRole('row').nth(1).waitFor();
    await page.getByText(bob.userId).waitFor();
    // Assess
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).not.toContain('laptop');
    expect(text).not.toContain('openai');
    expect(text).toContain(bob.userId);
    await page.context().close();
  });

  it('lets the operator create a user, whose token is shown once and works, and grant credits; others see no operator section', async () => {
    // Prepare
    const page = await harness.open(harness.platform.adminToken, '/account');
    const create = page.getByRole('form', { name: 'Create a user' });
    // Act
    await create.getByLabel('E-mail').fill('dora@example.com');
    await create.getByLabel('Credits').fill('42');
    await create.getByRole('button', { name: 'Create user' }).click();
    // Assess
    const token = (await page.locator('.secret-once .secret-value').first().textContent()) ?? '';
    const info = await harness.platform.api('GET', '/user/info', { token });
    expect(info.status).toBe(200);
    expect(info.body.data).toMatchObject({ email: 'dora@example.com', credits: 42 });
    await page.getByRole('table', { name: 'Users' }).getByText('dora@example.com').waitFor();
    // Act
    const row = page.getByRole('table', { name: 'Users' }).getByRole('row').filter({ hasText: 'dora@example.com' });
    await row.getByRole('button', { name: 'Grant credits' }).click();
    const grant = page.getByRole('form', { name: 'Grant credits' });
    await grant.getByLabel('Amount').fill('8');
    await grant.getByRole('button', { name: 'Grant credits' }).click();
    // Assess
    await page.getByText('now has 50 credits').waitFor();
    await expectAccessible(page);
    const plain = await harness.open(bob.token, '/account');
    await plain.getByText(bob.userId).waitFor();
    expect(await plain.getByRole('heading', { name: 'Users (operator)' }).count()).toBe(0);
    await page.context().close();
    await plain.context().close();
  });

  it('renames and regenerates a token, shows the credit entries, and connects an OAuth provider whose tokens become keys', async () => {
    // Prepare
    const made = await harness.platform.api('POST', '/user/token/create', { token: alice.token, body: { name: 'old-name' } });
    const oldValue = made.body.data.token as string;
    const page = await harness.open(alice.token, '/account');
    const tokens = page.getByRole('table', { name: 'API tokens' });
    // Act: rename
    await tokens.getByRole('row').filter({ hasText: 'old-name' }).getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('form', { name: 'Rename a token' }).getByLabel('New name').fill('new-name');
    await page.getByRole('button', { name: 'Save name' }).click();
    // Act: regenerate
    const row = tokens.getByRole('row').filter({ hasText: 'new-name' });
    await row.getByRole('button', { name: 'Regenerate' }).click();
    await row.getByRole('button', { name: 'Yes, regenerate' }).click();
    // Assess
    const newValue = (await page.locator('.secret-once .secret-value').first().textContent()) ?? '';
    expect(newValue).toMatch(/^svc_ut_/);
    expect((await harness.platform.api('GET', '/user/info', { token: oldValue })).status).toBe(401);
    expect((await harness.platform.api('GET', '/user/info', { token: newValue })).status).toBe(200);
    await page.getByRole('table', { name: 'Recent credit entries' }).getByRole('row').nth(1).waitFor();
    // Act: connect provider_a; the provider consents and sends the browser to the platform's callback
    await page.getByRole('button', { name: 'Connect provider_a' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/oauth/callback/'));
    // Assess
    await expect
      .poll(async () =>
        (await harness.platform.api('GET', '/keys/list', { token: alice.token })).body.data.keys.map((k: { serviceName: string }) => k.serviceName),
      )
      .toContain('provider_a_refresh');
    await page.goto(`${harness.consoleUrl}#/account`);
    await page.getByRole('table', { name: 'Stored keys' }).getByText('provider_a_refresh').waitFor();
    await expectAccessible(page);
    await page.context().close();
  });

  it('works at phone width: the menu opens the navigation, and nothing scrolls sideways', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/account', 'phone');
    // Assess
    await expectNoSidewaysScroll(page);
    expect(await page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(false);
    // Act
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Home' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(false);
    await page.context().close();
  });
});
