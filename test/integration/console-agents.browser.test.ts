import { readFileSync } from 'node:fs';
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

// The browser global the callbacks of page.waitForFunction use there (this project's types are Node's).
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

type User = Awaited<ReturnType<typeof createUser>>;

const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');

/** A text agent whose third line imports a module the checker refuses. */
const FORBIDDEN = 'class Agent:\n    pass\nimport os\n\n\ndef create_agent():\n    return Agent(), []\n';

/**
 * The console's agents pages in real Chromium against the running local platform: list, create,
 * edit, delete, the source checker's problems at their lines before saving, streamed chat with
 * tools, conversations, and a push-to-talk test call with a voice agent (Chromium's fake
 * microphone). Waits are on what the page shows, never on time.
 */
describe.skipIf(!HAS_CHROMIUM)('console: agents', () => {
  let harness: ConsoleHarness;
  let alice: User;
  let bob: User;

  async function createAgent(name: string, sourceCode: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await harness.platform.api('POST', '/agent/create', {
      token: alice.token,
      body: { agentName: name, description: `${name} for console tests`, sourceCode, ...extra },
    });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  }

  async function agentsOf(user: User, status: 'active' | 'deleted' = 'active') {
    const res = await harness.platform.api('GET', `/agent/list?limit=100&status=${status}`, { token: user.token });
    return res.body.data.agents as { agentId: string; agentName: string; description: string; status: string }[];
  }

  /** Waits until CodeMirror has replaced the plain textarea (the editor's chunk loaded). */
  const editorReady = (page: Page) => page.locator('.code-editor[data-ready="true"] .cm-content').waitFor();

  /** Replaces the whole source in the code editor, as typing or pasting would. */
  async function replaceSource(page: Page, source: string) {
    await editorReady(page);
    await page.locator('.cm-content').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText(source);
  }

  /** Sends a chat message and waits until its reply has finished streaming. */
  async function chat(page: Page, prompt: string) {
    const before = await page.locator('.agent-msg-user').count();
    await page.getByLabel('Message', { exact: true }).fill(prompt);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.agent-msg-user').nth(before).waitFor();
    await page.locator('[role="log"][aria-busy="false"]').waitFor();
  }

  beforeAll(async () => {
    harness = await startConsoleHarness();
    alice = await createUser(harness.platform, { alias: 'alice', credits: 5000 });
    bob = await createUser(harness.platform, { alias: 'bob', credits: 500 });
  }, 120_000);
  afterAll(() => harness?.close());

  it('creates an agent from the template, edits it, lists it and deletes it', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/agents');
    await page.getByText('No agents yet.').waitFor();
    await expectAccessible(page);

    // Act: create
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'New agent' }).waitFor();
    await editorReady(page);
    await expectAccessible(page);
    await page.getByLabel('Name', { exact: true }).fill('helper');
    await page.getByLabel('Description').fill('Helps with console tests');
    await page.getByRole('button', { name: 'Create agent' }).click();

    // Assess: the agent's own page, with the template as its source
    await page.getByRole('heading', { level: 1, name: 'helper' }).waitFor();
    const [created] = await agentsOf(alice);
    expect(created).toMatchObject({ agentName: 'helper', description: 'Helps with console tests' });
    const stored = await harness.platform.api('GET', `/agent/${created!.agentId}`, { token: alice.token });
    expect(stored.body.data.sourceCode).toContain('def create_agent()');
    await editorReady(page);
    await expectAccessible(page);

    // Act: edit
    await page.getByLabel('Description').fill('Edited in the console');
    await page.getByLabel('Visibility', { exact: true }).selectOption('public');
    await page.getByRole('button', { name: 'Save changes' }).click();
    // Assess
    await page.getByText('Saved.').waitFor();
    expect((await agentsOf(alice))[0]).toMatchObject({ description: 'Edited in the console' });
    expect((await harness.platform.api('GET', `/agent/${created!.agentId}`, { token: alice.token })).body.data.visibility).toBe('public');

    // Act: the list
    await page.getByRole('link', { name: 'All agents' }).click();
    const table = page.getByRole('table', { name: 'Your agents' });
    await table.getByRole('link', { name: 'helper', exact: true }).waitFor();
    // Assess
    expect(await table.textContent()).toContain('public');
    await expectAccessible(page);

    // Act: delete
    await table.getByRole('link', { name: 'helper', exact: true }).click();
    await page.getByRole('button', { name: 'Delete agent' }).click();
    await page.getByRole('button', { name: 'Yes, delete agent' }).click();
    // Assess
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.getByText('No agents yet.').waitFor();
    expect((await agentsOf(alice, 'deleted')).map((a) => a.agentName)).toContain('helper');
    await page.context().close();
  });

  it('marks a forbidden import at its line before saving, and creates nothing when saved anyway', async () => {
    // Prepare
    const page = await harness.open(alice.token, '/agents/new');
    await page.getByLabel('Name', { exact: true }).fill('forbidden');
    await page.getByLabel('Description').fill('Imports os');

    // Act: the voice template, checked as it is
    await editorReady(page);
    await page.getByLabel('Type').selectOption('bidi');
    await page.locator('.cm-content').filter({ hasText: 'A voice agent: create_bidi_agent()' }).waitFor();
    await page.getByRole('button', { name: 'Check' }).click();
    // Assess
    await page.getByText('No problems found.').waitFor();
    await page.getByLabel('Type').selectOption('text');
    await page.locator('.cm-content').filter({ hasText: 'A text agent: create_agent()' }).waitFor();

    // Act: typing stops; the check runs by itself
    await replaceSource(page, FORBIDDEN);
    // Assess: the problem is listed and marked at line 3 in the editor, before any save
    const problem = page.locator('.problems li').filter({ hasText: /^Line 3: .*\bos\b/ });
    await problem.waitFor();
    await page.locator('.cm-lintRange-error').first().waitFor();
    expect(await page.locator('.cm-lintRange-error').first().textContent()).toBe('import os');
    expect((await agentsOf(alice)).map((a) => a.agentName)).not.toContain('forbidden');

    // Act: a fixed source, checked with the button
    await replaceSource(page, FORBIDDEN.replace('import os\n', 'import json\n'));
    await page.getByRole('button', { name: 'Check' }).click();
    // Assess
    await page.getByText('No problems found.').waitFor();
    expect(await page.locator('.problems li').count()).toBe(0);

    // Act: back to the bad source, saved at once: the API's 400 marks the same line
    await replaceSource(page, FORBIDDEN);
    await page.getByRole('button', { name: 'Create agent' }).click();
    // Assess
    await page.getByRole('alert').filter({ hasText: 'INVALID_PARAMETERS' }).waitFor();
    await problem.waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New agent');
    expect((await agentsOf(alice)).map((a) => a.agentName)).not.toContain('forbidden');
    await page.context().close();
  });

  it('streams a chat, shows the tools the agent uses, continues the conversation and starts a new one', async () => {
    // Prepare
    const echoId = await createAgent('echo-chat', fixture('echo_agent'));
    const toolId = await createAgent('tool-chat', fixture('tool_agent'));
    const page = await harness.open(alice.token, `/agents/${echoId}/chat`);
    await page.getByRole('heading', { level: 1, name: 'echo-chat' }).waitFor();
    await expectAccessible(page);

    // Act: two turns of one conversation
    await chat(page, 'hello there');
    await chat(page, 'and again');
    // Assess
    const replies = page.locator('.agent-msg-assistant');
    expect(await replies.allInnerTexts()).toEqual([expect.stringContaining('echo: hello there'), expect.stringContaining('echo: and again')]);
    const conversations = await harness.platform.api('GET', `/agent/${echoId}/conversations`, { token: alice.token });
    expect(conversations.body.data.conversations).toHaveLength(1);
    expect(conversations.body.data.conversations[0].messageCount).toBe(4);
    const conversationId = conversations.body.data.conversations[0].conversationId as string;
    expect(await page.locator('.agent-chat-meta').textContent()).toContain(conversationId);
    await page.getByRole('link', { name: 'This run in the logs' }).waitFor();
    await expectAccessible(page);
    await expectNoSecrets(page, [alice.secretKey, bob.token]);

    // Act: a new conversation
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByText('No messages yet.').waitFor();
    await chat(page, 'fresh start');
    // Assess
    expect(await replies.allInnerTexts()).toEqual([expect.stringContaining('echo: fresh start')]);
    const after = await harness.platform.api('GET', `/agent/${echoId}/conversations`, { token: alice.token });
    expect(after.body.data.conversations).toHaveLength(2);

    // Act: an agent that uses tools
    await page.goto(`${harness.consoleUrl}#/agents/${toolId}/chat`);
    await page.getByRole('heading', { level: 1, name: 'tool-chat' }).waitFor();
    await chat(page, 'weather in Paris?');
    // Assess: each tool in the order it ran, between the text before and after it
    const log = page.getByRole('log', { name: 'Messages' });
    const kinds = await log
      .locator('.agent-msg')
      .evaluateAll((els) => els.map((el) => `${el.className.replace('agent-msg agent-msg-', '')}: ${el.textContent}`));
    expect(kinds).toEqual([
      'user: Youweather in Paris?',
      'assistant: Agentmcp entered',
      'tool: Tool weather used',
      'tool: Tool calculator used',
      'assistant: Agent done',
    ]);
    await page.context().close();
  });

  it('lists an agent’s conversations and shows one’s messages, and continues it in the chat', async () => {
    // Prepare
    const agentId = await createAgent('echo-history', fixture('echo_agent'));
    const first = await harness.platform.api('POST', `/agent/${agentId}/chat`, { token: alice.token, body: { prompt: 'first question' } });
    expect(first.status, first.text).toBe(200);
    await harness.platform.api('POST', `/agent/${agentId}/chat`, { token: alice.token, body: { prompt: 'second one' } });
    const page = await harness.open(alice.token, `/agents/${agentId}/conversations`);

    // Act
    const table = page.getByRole('table', { name: 'Conversations' });
    await table.getByRole('link', { name: 'first question' }).click();
    // Assess
    const messages = page.getByRole('list', { name: 'Messages' });
    await messages.getByText('echo: first question').waitFor();
    expect(await table.locator('tbody tr').count()).toBe(2);
    await expectAccessible(page);

    // Act: continue it
    await page.getByRole('link', { name: 'Continue in chat' }).click();
    await page.locator('.agent-msg-assistant').filter({ hasText: 'echo: first question' }).waitFor();
    await chat(page, 'a follow-up');
    // Assess
    const stored = await harness.platform.api('GET', `/agent/${agentId}/conversation/${first.body.data.conversationId}`, { token: alice.token });
    expect(stored.body.data.conversation.messages.map((m: { content: string }) => m.content)).toContain('echo: a follow-up');
    await page.context().close();
  });

  it('holds a push-to-talk test call with a voice agent: speech out, audio and transcripts back', async () => {
    // Prepare
    const voiceId = await createAgent('voice-echo', fixture('bidi_echo_agent'), { agentType: 'bidi' });
    const page = await harness.open(alice.token, `/agents/${voiceId}/chat`);
    await page.getByRole('heading', { level: 1, name: 'voice-echo' }).waitFor();
    await expectAccessible(page);

    // Act: connect, then hold Space on the talk button
    await page.getByRole('button', { name: 'Start test call' }).click();
    await page.getByRole('status').filter({ hasText: 'listening' }).waitFor();
    const talk = page.getByRole('button', { name: 'Hold to talk' });
    await talk.focus();
    await page.keyboard.down('Space');
    await page.getByRole('status').filter({ hasText: 'talking' }).waitFor();
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="speech-sent"]')?.textContent) >= 0.5);
    await page.keyboard.up('Space');
    // Assess: the echo agent sent audio back and said what it heard
    await page.waitForFunction(() => Number(document.querySelector('[data-testid="audio-received"]')?.textContent) > 0);
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.locator('.agent-msg').first().waitFor();
    expect(await talk.getAttribute('aria-pressed')).toBe('false');

    // Act: typed text
    await page.getByLabel('Say in text').fill('hello voice');
    await page.getByRole('button', { name: 'Send text' }).click();
    // Assess
    await transcript.getByText('echo: hello voice').waitFor();
    await expectAccessible(page);

    // Act: hang up
    await page.getByRole('button', { name: 'End call' }).click();
    // Assess
    await page.getByText(/Call ended: \d+ s/).waitFor();
    await page.getByRole('button', { name: 'Start test call' }).waitFor();
    await page.context().close();
  });

  it('shows another user none of these agents, their chats or conversations', async () => {
    // Prepare
    const agentId = await createAgent('private-echo', fixture('echo_agent'));
    const page = await harness.open(bob.token, '/agents');

    // Act / Assess: the list
    await page.getByText('No agents yet.').waitFor();
    expect(await page.content()).not.toContain('private-echo');
    // Act / Assess: the agent by address
    await page.goto(`${harness.consoleUrl}#/agents/${agentId}`);
    await page.getByRole('heading', { level: 1, name: 'Agent not available' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/ACCESS_DENIED|403/);
    await page.goto(`${harness.consoleUrl}#/agents/${agentId}/conversations`);
    await page.getByRole('heading', { level: 1, name: 'Agent not available' }).waitFor();
    await expectAccessible(page);
    await expectNoSecrets(page, [alice.token, alice.secretKey]);
    await page.context().close();
  });

  it('chats at phone width without sideways scrolling', async () => {
    // Prepare
    const agentId = await createAgent('echo-phone', fixture('echo_agent'));
    const page = await harness.open(alice.token, `/agents/${agentId}/chat`, 'phone');
    await page.getByRole('heading', { level: 1, name: 'echo-phone' }).waitFor();

    // Act
    await chat(page, 'a rather long message that should wrap nicely inside its bubble on a narrow phone screen');
    // Assess
    await page.locator('.agent-msg-assistant').filter({ hasText: 'echo: a rather long message' }).waitFor();
    await expectNoSidewaysScroll(page);
    await expectAccessible(page);
    await page.goto(`${harness.consoleUrl}#/agents`);
    await page.getByRole('table', { name: 'Your agents' }).waitFor();
    await expectNoSidewaysScroll(page);
    await page.context().close();
  });
});
