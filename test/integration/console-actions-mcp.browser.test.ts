import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/local-platform.ts';
import {
  expectAccessible,
  expectNoSecrets,
  expectNoSidewaysScroll,
  HAS_CHROMIUM,
  startConsoleHarness,
  type ConsoleHarness,
} from '../support/console-browser.ts';

type User = Awaited<ReturnType<typeof createUser>>;

const WEATHER_ACTION = `def handler(event, context):
    city = event["city"]
    return {"statusCode": 200, "body": {"city": city, "days": event.get("days"), "hasKey": "openai" in event["keys"]}}
`;

const FORBIDDEN_IMPORT = `import json
import os

def handler(event, context):
    return {"statusCode": 200, "body": {"cwd": os.getcwd()}}
`;

/** Fills a CodeMirror field (the console's CodeEditor) once it has loaded. */
async function fillCode(page: Page, label: string, text: string): Promise<void> {
  await page.locator('.code-editor[data-ready="true"]').first().waitFor();
  const editor = page.getByRole('textbox', { name: label });
  await editor.fill(text);
}

/** The text CodeMirror holds (its lines joined), to check what it will save. */
async function codeOf(page: Page, label: string): Promise<string> {
  const lines = await page.getByRole('textbox', { name: label }).locator('.cm-line').allTextContents();
  return lines.join('\n');
}

/**
 * The console's Actions and MCP servers pages in real Chromium against the running local platform:
 * create, edit, run and delete an action; an MCP server's versions, diff, rollback, pinning and tool
 * tester. Waits are on what the page shows, never on time.
 */
describe.skipIf(!HAS_CHROMIUM)('console: actions and MCP servers', () => {
  let harness: ConsoleHarness;
  let alice: User;
  let bob: User;
  const storedKey = 'sk-console-actions-secret-0123456789';
  let actionId = '';
  let serverId = '';

  beforeAll(async () => {
    harness = await startConsoleHarness();
    alice = await createUser(harness.platform, { alias: 'alice', credits: 500 });
    bob = await createUser(harness.platform, { alias: 'bob', credits: 50 });
    const stored = await harness.platform.api('POST', '/keys/store', { token: alice.token, body: { serviceName: 'openai', apiKey: storedKey } });
    expect(stored.status, stored.text).toBe(200);
  }, 300_000);
  afterAll(() => harness?.close());

  it('creates an action from the list, with a declared parameter and its source', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/actions');
    await page.getByText('No actions yet').waitFor();
    await expectAccessible(page);
    // Act
    await page.getByRole('link', { name: 'New action' }).click();
    await page.getByRole('heading', { level: 1, name: 'New action' }).waitFor();
    await page.locator('.code-editor[data-ready="true"]').waitFor();
    await expectAccessible(page);
    const form = page.getByRole('form', { name: 'New action' });
    await form.getByLabel('Name', { exact: true }).fill('Weather');
    await form.getByLabel('Description').fill('Weather by city');
    await form.getByLabel('Keys needed').fill('openai');
    await form.getByLabel('Parameter 1 name').fill('city');
    await form.getByLabel('Parameter 1 required').check();
    await form.getByRole('button', { name: 'Add parameter' }).click();
    await form.getByLabel('Parameter 2 name').fill('days');
    await form.getByLabel('Parameter 2 type').selectOption('integer');
    await fillCode(page, 'Source code (Python)', WEATHER_ACTION);
    await expectAccessible(page);
    await form.getByRole('button', { name: 'Create action' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Weather' }).waitFor();
    actionId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect(actionId).toMatch(/^act-/);
    const info = await harness.platform.api('GET', `/action/info/${actionId}`, { token: alice.token });
    expect(info.body.data).toMatchObject({
      actionName: 'Weather',
      keysNeeded: ['openai'],
      parameters: [
        { name: 'city', type: 'string', required: true },
        { name: 'days', type: 'integer', required: false },
      ],
    });
    expect(info.body.data.sourceCode).toBe(WEATHER_ACTION);
    await page.context().close();
  });

  it('runs code once without saving it, and marks a forbidden import at its line', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/actions');
    await page.getByRole('link', { name: 'Run code once' }).click();
    await page.getByRole('heading', { level: 1, name: 'Run code once' }).waitFor();
    // Act: a refused source
    await fillCode(page, 'Code', FORBIDDEN_IMPORT);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    // Assess
    await page.locator('.problems li').filter({ hasText: 'Line 2' }).waitFor();
    // Act: a good one, with an event
    await fillCode(page, 'Code', 'def handler(event, context):\n    return {"statusCode": 200, "body": {"doubled": event["a"] * 2}}\n');
    await fillCode(page, 'Event (JSON object)', '{"a": 21}');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    // Assess
    await page.getByLabel('Body').filter({ hasText: '"doubled": 42' }).waitFor();
    await page.getByRole('link', { name: 'its record' }).waitFor();
    await expectAccessible(page);
    const listed = await harness.platform.api('GET', '/action/list', { token: alice.token });
    expect(listed.body.data.actions.map((a: { actionName: string }) => a.actionName)).not.toContain('inline');
    await page.context().close();
  });

  it('edits the action and lists it', async () => {
    // Prepare
    const page = await harness.open(alice.token, `/actions/${actionId}`);
    const form = page.getByRole('form', { name: 'Edit action' });
    await page.locator('.code-editor[data-ready="true"]').waitFor();
    expect(await codeOf(page, 'Source code (Python)')).toBe(WEATHER_ACTION);
    // Act
    await form.getByLabel('Description').fill('Weather by city, edited');
    await form.getByLabel('Status').selectOption('active');
    await form.getByRole('button', { name: 'Save changes' }).click();
    // Assess
    await form.getByRole('status').filter({ hasText: 'updated' }).waitFor();
    const info = await harness.platform.api('GET', `/action/info/${actionId}`, { token: alice.token });
    expect(info.body.data).toMatchObject({ description: 'Weather by city, edited', status: 'active' });
    await expectAccessible(page);
    // Act: the list
    await page.getByRole('link', { name: 'All actions' }).click();
    // Assess
    const row = page.getByRole('table', { name: 'Your actions' }).getByRole('row').filter({ hasText: 'Weather' });
    await row.waitFor();
    expect(await row.textContent()).toContain('active');
    await page.context().close();
  });

  it('runs the action with its parameter fields, showing the result and the run’s record', async () => {
    // Prepare
    const before = (await harness.platform.api('GET', '/user/credits', { token: alice.token })).body.data.credits as number;
    const page = await harness.open(alice.token, `/actions/${actionId}/run`);
    const form = page.getByRole('form', { name: 'Run action' });
    // Act
    await form.getByLabel('city (required)').fill('Paris');
    await form.getByLabel('days').fill('3');
    await form.getByRole('button', { name: 'Run' }).click();
    // Assess
    const result = page.getByRole('region', { name: 'Run result' });
    await result.waitFor();
    expect(await result.textContent()).toContain('200');
    const body = JSON.parse((await result.getByLabel('Response body').textContent()) ?? '');
    expect(body).toEqual({ city: 'Paris', days: 3, hasKey: true });
    const record = result.locator('.am-record');
    const requestLink = record.getByRole('link');
    const requestId = (await requestLink.textContent()) ?? '';
    expect(await requestLink.getAttribute('href')).toBe(`#/logs/${encodeURIComponent(requestId)}`);
    expect(await record.textContent()).toMatch(/Duration[\d.]+ ms/);
    const credits = Number(/Credits([\d.,]+)/.exec((await record.textContent()) ?? '')?.[1]);
    expect(credits).toBeGreaterThanOrEqual(1);
    const after = (await harness.platform.api('GET', '/user/credits', { token: alice.token })).body.data.credits as number;
    expect(before - after).toBeCloseTo(credits, 4);
    const log = await harness.platform.api('GET', `/logs/${requestId}`, { token: alice.token });
    expect(log.status).toBe(200);
    await page.getByRole('table', { name: 'Recent runs of this action' }).getByRole('link', { name: requestId }).waitFor();
    await expectNoSecrets(page, [storedKey]);
    await expectAccessible(page);
    // Act: the same run as a JSON body, with a required parameter missing
    await form.getByLabel('Edit the body as JSON').check();
    await fillCode(page, 'Parameters (JSON body)', '{"days": 2}');
    await form.getByRole('button', { name: 'Run' }).click();
    // Assess
    await page.getByRole('alert').filter({ hasText: 'city' }).waitFor();
    expect(await page.getByRole('alert').first().textContent()).toContain('INVALID_PARAMETERS');
    await page.context().close();
  });

  it('marks a forbidden import at its line and saves nothing', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/actions/new');
    const form = page.getByRole('form', { name: 'New action' });
    await form.getByLabel('Name', { exact: true }).fill('Sneaky');
    await form.getByLabel('Description').fill('Reads the working directory');
    await fillCode(page, 'Source code (Python)', FORBIDDEN_IMPORT);
    // Act
    await form.getByRole('button', { name: 'Create action' }).click();
    // Assess
    const problem = form.locator('.problems li').filter({ hasText: /^Line 2: .*os/ });
    await problem.waitFor();
    await page.locator('.cm-lintRange-error').first().waitFor();
    // The marked range is on the second line, the one importing os.
    expect(await page.locator('.cm-line').nth(1).locator('.cm-lintRange-error').count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toContain('The source checker refused the code');
    await expectAccessible(page);
    const listed = await harness.platform.api('GET', '/action/list?visibility=all', { token: alice.token });
    expect(listed.body.data.actions.map((a: { actionName: string }) => a.actionName)).toEqual(['Weather']);
    await page.context().close();
  });

  it('creates an MCP server from the template, and a second version with a change note', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/mcp');
    await page.getByText('No MCP servers yet').waitFor();
    await expectAccessible(page);
    // Act
    await page.getByRole('link', { name: 'New server' }).click();
    const form = page.getByRole('form', { name: 'New MCP server' });
    await form.getByLabel('Name', { exact: true }).fill('weather');
    await form.getByLabel('Description').fill('Forecasts');
    await page.locator('.code-editor[data-ready="true"]').waitFor();
    await expectAccessible(page);
    await form.getByRole('button', { name: 'Create server' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'weather' }).waitFor();
    serverId = decodeURIComponent(new URL(page.url()).hash.split('/')[2] ?? '');
    expect(serverId).toMatch(/^mcp-/);
    expect(await page.locator('main').textContent()).toContain('live version 1');
    // Act: a second version
    const edit = page.getByRole('form', { name: 'Edit MCP server' });
    await page.locator('.code-editor[data-ready="true"]').waitFor();
    const source = await codeOf(page, 'Source code (Node.js)');
    await fillCode(page, 'Source code (Node.js)', source.replace('Sunny in', 'Rainy in'));
    await edit.getByLabel('Change note').fill('Rain too');
    await edit.getByRole('button', { name: 'Save as a new version' }).click();
    // Assess
    await edit.getByRole('status').filter({ hasText: 'Saved as version 2' }).waitFor();
    await expect.poll(async () => page.locator('main').textContent()).toContain('live version 2');
    const versions = await harness.platform.api('GET', `/mcp-admin/${serverId}/versions`, { token: alice.token });
    expect(versions.body.data.versions.map((v: { version: number; changeNote: string }) => v.version)).toEqual([2, 1]);
    expect(versions.body.data.versions[0].changeNote).toBe('Rain too');
    await expectAccessible(page);
    await page.context().close();
  });

  it('shows the versions with their change notes and the diff of two, signed + and -', async () => {
    // Prepare
    const page = await harness.open(alice.token, `/mcp/${serverId}/versions`);
    const table = page.getByRole('table', { name: 'Versions, newest first' });
    // Assess
    await table.getByRole('row').filter({ hasText: 'Rain too' }).waitFor();
    expect(await table.getByRole('row').nth(1).textContent()).toMatch(/v2\s*live/);
    const diff = page.getByRole('region', { name: 'Changes from version 1 to version 2' });
    await diff.waitFor();
    expect(await page.locator('.am-diff-stats').textContent()).toContain('1 line added (+), 1 line removed (-)');
    const removed = await diff.locator('del').allTextContents();
    const added = await diff.locator('ins').allTextContents();
    expect(removed).toHaveLength(1);
    expect(added).toHaveLength(1);
    expect(removed[0]).toMatch(/^\d+-.*Sunny in/);
    expect(added[0]).toMatch(/^\d+\+.*Rainy in/);
    await expectAccessible(page);
    // Act: compare the other way round
    await page.getByLabel('From version', { exact: true }).selectOption('2');
    await page.getByLabel('To version', { exact: true }).selectOption('1');
    // Assess
    await page.getByRole('region', { name: 'Changes from version 2 to version 1' }).locator('ins').filter({ hasText: 'Sunny in' }).waitFor();
    await page.context().close();
  });

  it('pins version 1 and calls its tool through the pinned endpoint, then rolls back to it', async () => {
    // Prepare
    const page = await harness.open(alice.token, `/mcp/${serverId}/versions`);
    const table = page.getByRole('table', { name: 'Versions, newest first' });
    // Act: pin
    await table.getByRole('button', { name: 'Pin version 1' }).click();
    // Assess
    const pinned = page.getByRole('status').filter({ hasText: 'Version 1 pinned' });
    expect(await pinned.locator('code').textContent()).toBe(`${harness.platform.url}/mcp/${serverId}?v=1`);
    // Act: its tools
    await pinned.getByRole('link', { name: 'Test the tools of version 1' }).click();
    const call = page.getByRole('form', { name: 'Call forecast' });
    await call.getByLabel('city (required)').fill('Paris');
    await call.getByRole('button', { name: 'Call tool' }).click();
    // Assess
    const result = page.getByRole('region', { name: 'Tool result' });
    await result.getByLabel('Text content 1').filter({ hasText: 'Sunny in Paris' }).waitFor();
    expect(await result.getByRole('heading').textContent()).toBe('Result (version 1)');
    expect(await page.getByLabel('Version to call').inputValue()).toBe('1');
    // Act: roll back
    await page.getByRole('link', { name: 'Versions' }).click();
    const row = page.getByRole('table', { name: 'Versions, newest first' }).getByRole('row').filter({ hasText: /^v1/ });
    await row.getByRole('button', { name: 'Roll back to v1' }).click();
    await row.getByRole('button', { name: 'Yes, roll back to v1' }).click();
    // Assess
    await page.getByRole('status').filter({ hasText: 'Rolled back to version 1: version 3 is live' }).waitFor();
    const newest = page.getByRole('table', { name: 'Versions, newest first' }).getByRole('row').nth(1);
    await expect.poll(() => newest.textContent()).toMatch(/v3\s*live.*v1/);
    await expect.poll(async () => page.locator('main').textContent()).toContain('live version 3');
    const server = await harness.platform.api('GET', `/mcp-admin/${serverId}`, { token: alice.token });
    expect(server.body.data.latestVersion).toBe(3);
    expect(server.body.data.sourceCode).toContain('Sunny in');
    await page.context().close();
  });

  it('lists the live tools over MCP and calls one with a form built from its input schema', async () => {
    // Prepare
    const page = await harness.open(alice.token, `/mcp/${serverId}/tools`);
    const tools = page.getByRole('group', { name: 'Tool' });
    // Assess: the list and the form
    await tools.getByLabel('forecast').waitFor();
    expect(await tools.getByLabel('forecast').isChecked()).toBe(true);
    expect(await tools.textContent()).toContain('Forecast for a city');
    const call = page.getByRole('form', { name: 'Call forecast' });
    expect(await call.getByLabel('city (required)').getAttribute('required')).not.toBeNull();
    expect(await call.getByLabel('days').getAttribute('type')).toBe('number');
    expect(await call.getByLabel('units').locator('option').allTextContents()).toEqual(['(not set)', 'metric', 'imperial']);
    await expectAccessible(page);
    // Act
    await call.getByLabel('city (required)').fill('Oslo');
    await call.getByLabel('days').fill('3');
    await call.getByLabel('units').selectOption('imperial');
    await call.getByRole('button', { name: 'Call tool' }).click();
    // Assess
    const result = page.getByRole('region', { name: 'Tool result' });
    await result.getByLabel('Text content 1').filter({ hasText: 'Sunny in Oslo for 3 day(s), imperial units' }).waitFor();
    expect(await result.getByRole('heading').textContent()).toBe('Result (version 3)');
    await expectAccessible(page);
    // Act: a number that is not whole is refused in the page, before anything is called
    await call.getByLabel('days').fill('1.5');
    // Assess
    expect(await call.getByLabel('days').evaluate((input) => (input as unknown as { validity: { valid: boolean } }).validity.valid)).toBe(false);
    await page.context().close();
  });

  it('shows another user none of these', async () => {
    // Act
    const page = await harness.open(bob.token, '/actions');
    // Assess
    await page.getByText('No actions yet').waitFor();
    expect(await page.locator('main').textContent()).not.toContain('Weather');
    // Act
    await page.goto(`${harness.consoleUrl}#/actions/${actionId}`);
    // Assess
    await page.getByText('This action could not be loaded').waitFor();
    expect(await page.locator('main').textContent()).not.toContain('def handler');
    // Act
    await page.goto(`${harness.consoleUrl}#/mcp`);
    // Assess
    await page.getByText('No MCP servers yet').waitFor();
    // Act
    await page.goto(`${harness.consoleUrl}#/mcp/${serverId}/versions`);
    // Assess
    await page.getByText('This server could not be loaded').waitFor();
    expect(await page.locator('main').textContent()).not.toContain('Rain too');
    await expectAccessible(page);
    await page.context().close();
  });

  it('works at phone width: the versions and the run page scroll nothing sideways', async () => {
    // Act
    const page = await harness.open(alice.token, `/mcp/${serverId}/versions`, 'phone');
    await page.getByRole('region', { name: /^Changes from version/ }).waitFor();
    // Assess
    await expectNoSidewaysScroll(page);
    // Act
    await page.goto(`${harness.consoleUrl}#/actions/${actionId}/run`);
    await page.getByRole('form', { name: 'Run action' }).getByLabel('city (required)').fill('Lyon');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByRole('region', { name: 'Run result' }).waitFor();
    // Assess
    await expectNoSidewaysScroll(page);
    await page.context().close();
  });

  it('deletes the action and the server behind a confirmation', async () => {
    // Prepare
    const page = await harness.open(alice.token, `/actions/${actionId}`);
    // Act
    await page.getByRole('button', { name: 'Delete action' }).click();
    await page.getByRole('button', { name: 'Yes, delete action' }).click();
    // Assess
    await page.getByText('No actions yet').waitFor();
    expect((await harness.platform.api('GET', `/action/info/${actionId}`, { token: alice.token })).status).toBe(404);
    // Act
    await page.goto(`${harness.consoleUrl}#/mcp/${serverId}`);
    await page.getByRole('button', { name: 'Delete server' }).click();
    await page.getByRole('button', { name: 'Yes, delete server' }).click();
    // Assess
    await page.getByText('No MCP servers yet').waitFor();
    expect((await harness.platform.api('GET', `/mcp-admin/${serverId}`, { token: alice.token })).status).toBe(404);
    await page.context().close();
  });
});
