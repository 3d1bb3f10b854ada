import { readFileSync } from 'node:fs';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/local-platform.ts';
import {
  everythingThePageHolds,
  expectAccessible,
  expectNoSecrets,
  expectNoSidewaysScroll,
  HAS_CHROMIUM,
  startConsoleHarness,
  type ConsoleHarness,
} from '../support/console-browser.ts';

// The browser globals the callbacks of page.evaluate use there (this project's types are Node's).
declare const window: any;
declare const document: any;
declare const location: any;

type User = Awaited<ReturnType<typeof createUser>>;

/** The runtime's own plain-Python test agents (python-runtime/tests/fixtures). */
const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');

/**
 * The console's cron jobs, channels, embeds and logs pages in real Chromium against the running
 * local platform. Waits are on what the page shows, never on time.
 */
describe.skipIf(!HAS_CHROMIUM)('console: cron jobs, channels, embeds, logs', () => {
  let harness: ConsoleHarness;
  let alice: User;
  let bob: User;
  let echoId: string;
  let raisingId: string;

  const createAgent = async (user: User, agentName: string, sourceCode: string) => {
    const res = await harness.platform.api('POST', '/agent/create', { token: user.token, body: { agentName, description: agentName, sourceCode } });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  };
  const rowOf = (page: Page, table: string, text: string) => page.getByRole('table', { name: table }).getByRole('row').filter({ hasText: text });

  beforeAll(async () => {
    harness = await startConsoleHarness();
    alice = await createUser(harness.platform, { alias: 'alice', credits: 5000 });
    bob = await createUser(harness.platform, { alias: 'bob', credits: 50 });
    echoId = await createAgent(alice, 'echo-helper', fixture('echo_agent'));
    raisingId = await createAgent(alice, 'raising-helper', fixture('raising_agent'));
  }, 120_000);
  afterAll(() => harness?.close());

  it('creates a cron job (the schedule refused first, with the API’s reason), pauses, resumes and deletes it', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/cron');
    const form = page.getByRole('form', { name: 'Create a cron job' });
    await form.getByLabel('Agent', { exact: true }).locator('option', { hasText: 'echo-helper' }).waitFor({ state: 'attached' });
    await expectAccessible(page);
    // Act: a schedule the API refuses
    await form.getByLabel('Name').fill('morning brief');
    await form.getByLabel('Agent', { exact: true }).selectOption({ label: 'echo-helper' });
    await form.getByLabel('Schedule').fill('rate(1 minutes)');
    await form.getByLabel('Prompt').fill('Summarise the news');
    await form.getByRole('button', { name: 'Create cron job' }).click();
    // Assess: the reason is under the field
    await form.locator('.field-error').filter({ hasText: 'rate(1 minutes)' }).waitFor();
    expect(await form.getByLabel('Schedule').getAttribute('aria-invalid')).toBe('true');
    // Act: a valid one
    await form.getByLabel('Schedule').fill('cron(0 8 * * ? *)');
    await form.getByLabel('Time zone').fill('Europe/Paris');
    await form.getByRole('button', { name: 'Create cron job' }).click();
    // Assess
    const row = rowOf(page, 'Your cron jobs', 'morning brief');
    await row.waitFor();
    expect(await row.textContent()).toContain('cron(0 8 * * ? *)');
    expect(await row.textContent()).toContain('active');
    const listed = await harness.platform.api('GET', '/cron', { token: alice.token });
    expect(listed.body.data.crons).toEqual([
      expect.objectContaining({ name: 'morning brief', agentId: echoId, scheduleTimezone: 'Europe/Paris', inputMessage: 'Summarise the news' }),
    ]);
    // Act: pause, then resume
    await row.getByRole('button', { name: 'Pause morning brief' }).click();
    await row.getByRole('button', { name: 'Resume morning brief' }).waitFor();
    expect(await row.textContent()).toContain('paused');
    await row.getByRole('button', { name: 'Resume morning brief' }).click();
    // Assess
    await row.getByRole('button', { name: 'Pause morning brief' }).waitFor();
    expect(await row.textContent()).toContain('active');
    // Act: delete
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    // Assess
    await page.getByText('No cron jobs yet').waitFor();
    expect((await harness.platform.api('GET', '/cron', { token: alice.token })).body.data.crons).toEqual([]);
    await page.context().close();
  });

  it('runs a job whose agent raises and shows its lastError, on the list and on the job’s page with its runs', async () => {
    // Prepare
    const created = await harness.platform.api('POST', '/cron', {
      token: alice.token,
      body: { name: 'doomed job', agentId: raisingId, schedule: 'rate(1 day)', inputMessage: 'go' },
    });
    expect(created.status, created.text).toBe(200);
    const cronId = created.body.data.cronId as string;
    const page = await harness.open(alice.token, '/cron');
    const row = rowOf(page, 'Your cron jobs', 'doomed job');
    // Act
    await row.getByRole('button', { name: 'Run now: doomed job' }).click();
    // Assess
    await row.getByText('AGENT_EXECUTION_FAILED').waitFor();
    expect(await row.textContent()).toContain('the agent broke on purpose');
    expect(await row.textContent()).toContain('1 failed in a row');
    // Act: the job's own page
    await row.getByRole('link', { name: 'doomed job' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'doomed job' }).waitFor();
    await page.getByRole('table', { name: 'Recent runs' }).getByText('cron').first().waitFor();
    expect(await page.locator('.facts').textContent()).toContain('AGENT_EXECUTION_FAILED');
    expect(await page.getByRole('form', { name: 'Edit the cron job' }).getByLabel('Schedule').inputValue()).toBe('rate(1 day)');
    await expectAccessible(page);
    await harness.platform.api('DELETE', `/cron/${cronId}`, { token: alice.token });
    await page.context().close();
  });

  it('creates a webhook channel whose secret never reaches the page, tests it, mutes and unmutes a sender, pauses and deletes it', async () => {
    // Prepare
    const secret = 'whsec-console-0123456789abcdef';
    const page = await harness.open(alice.token, '/channels');
    const form = page.getByRole('form', { name: 'Create a channel' });
    await form.getByLabel('Agent', { exact: true }).locator('option', { hasText: 'echo-helper' }).waitFor({ state: 'attached' });
    await expectAccessible(page);
    // Act
    await form.getByLabel('Name').fill('support');
    await form.getByLabel('Platform').selectOption('webhook');
    await form.getByLabel('Agent', { exact: true }).selectOption({ label: 'echo-helper' });
    expect(await form.getByLabel('HMAC secret (optional)').getAttribute('type')).toBe('password');
    await form.getByLabel('HMAC secret (optional)').fill(secret);
    await form.getByRole('button', { name: 'Create channel' }).click();
    // Assess: the webhook URL to copy, the secret gone from the form and the page
    const webhookUrl = page.getByLabel('Webhook URL of support');
    await webhookUrl.waitFor();
    expect(await webhookUrl.inputValue()).toMatch(/\/channels\/inbound\/ch-[0-9A-Za-z]+\/webhook$/);
    await rowOf(page, 'Your channels', 'support').waitFor();
    expect(await form.getByLabel('HMAC secret (optional)').inputValue()).toBe('');
    await expectNoSecrets(page, [secret]);
    // Act: its page, a test message
    await rowOf(page, 'Your channels', 'support').getByRole('link', { name: 'support' }).click();
    await page.getByRole('heading', { level: 1, name: 'support' }).waitFor();
    await page.getByRole('form', { name: 'Test the channel' }).getByLabel('Test message').fill('ping');
    await page.getByRole('button', { name: 'Send test' }).click();
    // Assess
    await page.getByText('echo: ping').waitFor();
    expect(await page.locator('.facts').textContent()).toContain('secret: ****');
    await expectNoSecrets(page, [secret]);
    // Act: mute, then unmute a sender
    const mute = page.getByRole('form', { name: 'Mute a sender' });
    await mute.getByLabel('Sender id').fill('U123');
    await mute.getByLabel('Reason').fill('a human answers');
    await mute.getByRole('button', { name: 'Mute' }).click();
    const muted = rowOf(page, 'Muted senders', 'U123');
    await muted.waitFor();
    expect(await muted.textContent()).toContain('a human answers');
    await muted.getByRole('button', { name: 'Unmute U123' }).click();
    // Assess
    await page.getByText('No muted senders.').waitFor();
    // Act: pause
    await page.getByRole('button', { name: 'Pause support' }).click();
    // Assess
    await page.getByRole('button', { name: 'Resume support' }).waitFor();
    expect(await page.locator('.facts').textContent()).toContain('paused');
    await expectAccessible(page);
    // Act: delete
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Channels' }).waitFor();
    await page.getByText('No channels yet').waitFor();
    await page.context().close();
  });

  it('creates an embed token, shows its snippet once and the widget running in the preview, then revokes it', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/embeds');
    const form = page.getByRole('form', { name: 'Create an embed token' });
    await form.getByLabel('Text agent').locator('option', { hasText: 'echo-helper' }).waitFor({ state: 'attached' });
    await expectAccessible(page);
    // Act
    await form.getByLabel('Text agent').selectOption({ label: 'echo-helper' });
    await form.getByLabel('Greeting').fill('Hi from the preview');
    await form.getByLabel('Size').selectOption('compact');
    await form.getByRole('button', { name: 'Create embed token' }).click();
    // Assess: the snippet, once
    const snippet = (await page.locator('.secret-once .secret-value').textContent()) ?? '';
    expect(snippet).toMatch(/^<script src="[^"]+\/widget\.js" data-token="emb_pk_live_[^"]+" data-text-agent="/);
    const token = /data-token="([^"]+)"/.exec(snippet)![1]!;
    const listed = await harness.platform.api('GET', '/embed/list', { token: alice.token });
    expect(listed.body.data.tokens[0].allowedDomains).toEqual(['localhost', new URL(harness.platform.url).host]);
    // Assess: the widget loads in the preview and chats
    const preview = page.locator('iframe.widget-preview');
    expect(await preview.getAttribute('sandbox')).toBe('allow-scripts allow-same-origin allow-forms');
    const frame = (await (await preview.elementHandle())!.contentFrame()) as Frame;
    await frame.waitForFunction(() => window.ServiceWidget?.isReady());
    const widget = frame.locator('[data-service-widget]');
    await preview.scrollIntoViewIfNeeded();
    await widget.getByRole('button', { name: 'Open chat' }).click();
    await widget.getByRole('textbox', { name: 'Message' }).fill('hello there');
    await widget.getByRole('textbox', { name: 'Message' }).press('Enter');
    await widget.getByText('echo: hello there').waitFor();
    await expectAccessible(page);
    // Assess: leaving the page leaves nothing of the token behind (the widget kept its visitor under it)
    await page.goto(`${harness.consoleUrl}#/cron`);
    await page.getByRole('heading', { level: 1, name: 'Cron jobs' }).waitFor();
    await expectNoSecrets(page, [token]);
    await page.goto(`${harness.consoleUrl}#/embeds`);
    // Act: revoke
    const row = rowOf(page, 'Your embed tokens', 'echo-helper');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    // Assess
    await row.getByRole('button', { name: /^Restore/ }).waitFor();
    expect(await row.textContent()).toContain('revoked');
    // After a reload the token is nowhere in the page.
    await page.reload();
    await rowOf(page, 'Your embed tokens', 'echo-helper').waitFor();
    await expectNoSecrets(page, [token]);
    await page.context().close();
  });

  it('filters the logs by status, opens a chat’s record and draws the trace of a cron run as a tree the keyboard can walk', async () => {
    // Prepare: a chat that works, one that fails, and a cron run (a cron record with the chat it caused)
    const ok = await harness.platform.api('POST', `/agent/${echoId}/chat`, { token: alice.token, body: { prompt: 'log me' } });
    expect(ok.status, ok.text).toBe(200);
    const failed = await harness.platform.api('POST', `/agent/${raisingId}/chat`, { token: alice.token, body: { prompt: 'fail me' } });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    const job = await harness.platform.api('POST', '/cron', {
      token: alice.token,
      body: { name: 'traced', agentId: echoId, schedule: 'rate(1 day)', inputMessage: 'traced run' },
    });
    const run = await harness.platform.api('POST', `/cron/${job.body.data.cronId}/run`, { token: alice.token });
    expect(run.body.data.status).toBe('success');
    const logs = (await harness.platform.api('GET', '/logs?pageSize=200', { token: alice.token })).body.data.logs as {
      requestId: string;
      resourceType: string;
      resourceId: string;
      status: string;
      parentRequestId: string | null;
    }[];
    const chat = logs.find((l) => l.resourceType === 'agent' && l.resourceId === echoId && l.parentRequestId === null)!;
    // Act: only errors
    const page = await harness.open(alice.token, '/logs');
    await page.getByRole('table', { name: 'Usage records, newest first' }).waitFor();
    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Apply' }).click();
    // Assess
    await expect.poll(() => page.evaluate(() => location.hash)).toBe('#/logs?status=error');
    const table = page.getByRole('table', { name: 'Usage records, newest first' });
    await expect.poll(() => table.getByRole('row').count(), { timeout: 20_000 }).toBe(1 + logs.filter((l) => l.status === 'error').length);
    expect(await table.locator('tbody').textContent()).not.toContain('success');
    await expectAccessible(page);
    // Act: the chat's record
    await page.goto(`${harness.consoleUrl}#/logs/${chat.requestId}`);
    await page.getByRole('heading', { level: 1, name: 'Request' }).waitFor();
    // Assess: metrics, credits, bodies, a one-node trace
    await page.getByRole('tree', { name: 'Trace of the request' }).waitFor();
    const facts = (await page.locator('.facts').textContent()) ?? '';
    expect(facts).toContain('success');
    expect(facts).toContain('Credits');
    expect(facts).toContain('echo-helper');
    expect(await page.locator('pre[aria-label="Request body"]').textContent()).toContain('log me');
    expect(await page.locator('pre[aria-label="Response body"]').textContent()).toContain('echo: log me');
    expect(await page.getByRole('treeitem').count()).toBe(1);
    await expectAccessible(page);
    // Act: the cron run's record, its trace
    await page.goto(`${harness.consoleUrl}#/logs/${run.body.data.requestId}`);
    const tree = page.getByRole('tree', { name: 'Trace of the request' });
    await tree.waitFor();
    // Assess: the cron run at the top, the chat it caused under it
    const items = page.getByRole('treeitem');
    await expect.poll(() => items.count(), { timeout: 20_000 }).toBe(2);
    expect(await items.nth(0).getAttribute('aria-level')).toBe('1');
    expect(await items.nth(0).getAttribute('aria-expanded')).toBe('true');
    expect(await items.nth(0).locator('.trace-kind').first().textContent()).toContain('cron');
    expect(await items.nth(1).getAttribute('aria-level')).toBe('2');
    expect(await items.nth(1).locator('.trace-name').textContent()).toBe('echo-helper');
    // Act: the keyboard (one tab stop, arrows move, Left collapses, Enter opens)
    await items.nth(0).focus();
    await page.keyboard.press('ArrowDown');
    // Assess
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-level'))).toBe('2');
    expect(await page.locator('[role=treeitem][tabindex="0"]').count()).toBe(1);
    // Act
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    // Assess
    await expect.poll(() => items.nth(0).getAttribute('aria-expanded')).toBe('false');
    expect(await items.count()).toBe(1);
    // Act
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    // Assess: the chat's own record, the whole chain a link away
    await expect.poll(() => page.evaluate(() => location.hash)).not.toContain(run.body.data.requestId);
    expect(await page.locator('pre[aria-label="Request body"]').textContent()).toContain('traced run');
    await page.getByRole('link', { name: 'Show the whole chain from its first request' }).click();
    await expect.poll(() => page.getByRole('treeitem').count(), { timeout: 20_000 }).toBe(2);
    await expectAccessible(page);
    await harness.platform.api('DELETE', `/cron/${job.body.data.cronId}`, { token: alice.token });
    await page.context().close();
  });

  it('shows another user none of these', async () => {
    // Prepare: something of alice's on each page
    const job = await harness.platform.api('POST', '/cron', { token: alice.token, body: { name: 'alice-job', agentId: echoId, schedule: 'rate(1 day)' } });
    const channel = await harness.platform.api('POST', '/channels', {
      token: alice.token,
      body: { name: 'alice-channel', platform: 'webhook', agentId: echoId, platformConfig: {} },
    });
    expect(channel.status, channel.text).toBe(200);
    await harness.platform.api('POST', '/embed/create', { token: alice.token, body: { agentId: echoId, allowedDomains: ['alice.example'] } });
    const page = await harness.open(bob.token, '/cron');
    // Act and assess: each list is empty for bob
    await page.getByText('No cron jobs yet').waitFor();
    await page.goto(`${harness.consoleUrl}#/channels`);
    await page.getByText('No channels yet').waitFor();
    await page.goto(`${harness.consoleUrl}#/embeds`);
    await page.getByText('No embed tokens yet').waitFor();
    await page.goto(`${harness.consoleUrl}#/logs?timeRange=720`);
    await page.getByText('No records match these filters.').waitFor();
    // Act: alice's job and channel by their addresses
    await page.goto(`${harness.consoleUrl}#/cron/${job.body.data.cronId}`);
    await page.getByRole('alert').waitFor();
    await page.goto(`${harness.consoleUrl}#/channels/${channel.body.data.channelId}`);
    await page.getByRole('alert').waitFor();
    // Assess
    const held = await everythingThePageHolds(page);
    for (const name of ['alice-job', 'alice-channel', 'alice.example', 'echo-helper']) expect(held).not.toContain(name);
    await page.context().close();
    await harness.platform.api('DELETE', `/cron/${job.body.data.cronId}`, { token: alice.token });
    await harness.platform.api('DELETE', `/channels/${channel.body.data.channelId}`, { token: alice.token });
  });

  it('fits the cron, channels, embeds and logs pages in a phone’s width', async () => {
    // Prepare
    const job = await harness.platform.api('POST', '/cron', {
      token: alice.token,
      body: { name: 'a job with a rather long name for a phone', agentId: raisingId, schedule: 'cron(0/15 9-17 ? * MON-FRI *)' },
    });
    await harness.platform.api('POST', `/cron/${job.body.data.cronId}/run`, { token: alice.token });
    const page = await harness.open(alice.token, '/cron', 'phone');
    for (const [path, shown] of [
      ['/cron', 'a job with a rather long name'],
      [`/cron/${job.body.data.cronId}`, 'Recent runs'],
      ['/channels', 'Create a channel'],
      ['/embeds', 'Create an embed token'],
      ['/logs', 'Records'],
    ] as const) {
      // Act
      await page.goto(`${harness.consoleUrl}#${path}`);
      await page.getByText(shown).first().waitFor();
      // Assess
      await expectNoSidewaysScroll(page);
    }
    await expectAccessible(page);
    await harness.platform.api('DELETE', `/cron/${job.body.data.cronId}`, { token: alice.token });
    await page.context().close();
  });
});
