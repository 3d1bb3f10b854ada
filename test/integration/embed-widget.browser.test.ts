import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WIDGET_VERSION } from '../../widget/version.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { voiceAgentSource } from '../support/voice-agents.ts';

/**
 * A voice agent that answers the caller's first audio with 3 s of speech at once and, 25 caller
 * frames (half a second) later, reports that the caller talked over it.
 */
const INTERRUPTED_AGENT = voiceAgentSource({
  preamble: `
    import base64

    CHUNK = base64.b64encode((1000).to_bytes(2, "little", signed=True) * 2400).decode()`,
  init: 'self.heard = 0',
  send: `
    if isinstance(message, str):
        return
    self.heard += 1
    if self.heard == 1:
        for _ in range(30):
            await self.events.put({"type": "bidi_audio_stream", "audio": CHUNK, "sample_rate": 24000})
    if self.heard == 26:
        await self.events.put({"type": "bidi_interruption", "reason": "user_speech"})
        await self.events.put({"type": "bidi_transcript_stream", "role": "assistant", "text": "talked over", "is_final": True})`,
});

// The browser globals the callbacks of page.evaluate use there (this project's types are Node's).
declare const window: any;
declare const document: any;
declare function getComputedStyle(element: unknown): { color: string; backgroundColor: string };
declare function requestAnimationFrame(callback: () => void): number;

const CHROMIUM = '/usr/bin/chromium';
const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
/** The widget's budget: what a page downloads, gzipped (the aim is under 30 KB). */
const WIDGET_GZIP_BUDGET = 30 * 1024;

type User = Awaited<ReturnType<typeof createUser>>;

/**
 * The embed widget in real Chromium (Debian's, driven by playwright-core) against the running
 * local platform, on test pages served from a loopback origin of their own. One browser for the
 * whole file; each test opens its own page. Waits are on conditions the page reaches, never on time.
 */
describe.skipIf(!existsSync(CHROMIUM))('embed widget in Chromium', () => {
  let platform: TestPlatform;
  let owner: User;
  let browser: Browser;
  let pages: Server;
  let pageOrigin: string;
  let cdnUrl: string;
  let echoId: string;
  let toolId: string;
  let voiceId: string;
  let workDir: string;
  const html = new Map<string, string>();

  const createAgent = async (agentName: string, sourceCode: string, extra: Record<string, unknown> = {}) => {
    const res = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName, description: agentName, sourceCode, ...extra } });
    expect(res.status, res.text).toBe(200);
    return res.body.data.agentId as string;
  };
  const embed = async (body: Record<string, unknown>) => {
    const res = await platform.api('POST', '/embed/create', { token: owner.token, body: { allowedDomains: ['127.0.0.1'], rateLimitPerIp: 1000, ...body } });
    expect(res.status, res.text).toBe(200);
    return res.body.data as { embedTokenId: string; embedToken: string; snippet: string };
  };
  /**
   * A page on the test origin with `snippet` (and `body`), its widget events recorded;
   * `initScript` runs in the page before any of its own scripts.
   */
  const openPage = async (snippet: string, body = '<h1>Shop</h1>', initScript?: string): Promise<Page> => {
    const path = `/page-${html.size}.html`;
    html.set(
      path,
      `<!doctype html><html><head><title>Test page</title><style>* { font-family: serif !important; color: red !important }</style></head><body>${body}<script>window.__order = [];</script>${snippet}</body></html>`,
    );
    const page = await browser.newPage();
    await page.addInitScript({ content: RECORD_EVENTS });
    if (initScript) await page.addInitScript({ content: initScript });
    await page.goto(pageOrigin + path);
    return page;
  };
  /**
   * Records every widget event in `window.__events`, in order. An init script: it subscribes the
   * moment the widget defines its API, so no event (an auto-open's `open`) comes before it.
   */
  const RECORD_EVENTS = `(() => {
    window.__events = [];
    let api;
    Object.defineProperty(window, 'ServiceWidget', {
      configurable: true,
      get: () => api,
      set: (value) => {
        api = value;
        for (const event of ['ready', 'open', 'close', 'voiceStart', 'voiceEnd', 'transcript'])
          value.on(event, (data) => window.__events.push({ event, data }));
      },
    });
  })();`;
  const events = (page: Page) => page.evaluate(() => (window as unknown as { __events: { event: string; data?: unknown }[] }).__events);
  const waitForEvent = (page: Page, event: string) =>
    page.waitForFunction((name) => (window as unknown as { __events: { event: string }[] }).__events.some((e) => e.event === name), event);
  const widget = (page: Page) => page.locator('[data-service-widget]');
  /**
   * The assistant's reply containing `text`, once its stream has ended: only then does the widget
   * take the next message (one sent while a reply streams is not sent).
   */
  const finishedReply = (page: Page, text: string) => widget(page).locator('.bubble.assistant:not([aria-busy])').filter({ hasText: text });
  /** Waits until the widget's API says it is ready, then opens its panel. */
  const openWhenReady = async (page: Page) => {
    await page.waitForFunction(() => (window as unknown as { ServiceWidget?: { isReady(): boolean } }).ServiceWidget?.isReady());
    await page.evaluate(() => (window as unknown as { ServiceWidget: { open(): void } }).ServiceWidget.open());
  };

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'widget-owner', credits: 5000 });
    cdnUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.cdnUrl;
    echoId = await createAgent('echo-helper', fixture('echo_agent'));
    toolId = await createAgent('tool-helper', fixture('tool_agent'));
    voiceId = await createAgent('voice-helper', fixture('bidi_echo_agent'), { agentType: 'bidi' });
    workDir = await mkdtemp(join(tmpdir(), 'widget-test-'));
    // Speech for the fake microphone, made now so the test needs no binary fixture.
    const wav = join(workDir, 'speech.wav');
    // Amplitude 40 of 200: the echo agent takes peaks above 20000 for a caller talking over it (barge-in).
    execFileSync('espeak-ng', ['-a', '40', '-w', wav, 'Hello, I would like to know the opening hours.']);
    pages = createServer((req, res) => {
      const page = html.get(new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(page === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page ?? 'not found');
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--autoplay-policy=no-user-gesture-required',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${wav}`,
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (pages) await new Promise((resolve) => pages.close(resolve));
    await platform?.stop({ removeData: true });
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('is served from the CDN host, current and versioned, within its size budget', async () => {
    // Act
    const current = await fetch(`${cdnUrl}/widget.js`);
    const versioned = await fetch(`${cdnUrl}/v${WIDGET_VERSION}/widget.js`);
    const code = await current.text();

    // Assess
    expect(current.status).toBe(200);
    expect(current.headers.get('content-type')).toContain('javascript');
    expect(versioned.headers.get('cache-control')).toContain('immutable');
    expect(await versioned.text()).toBe(code);
    expect(gzipSync(code).length).toBeLessThan(WIDGET_GZIP_BUDGET);
  });

  it('loads from the snippet, fires ready, and streams a text reply with the markers hidden', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: echoId, greeting: 'Welcome to the shop!' });
    const page = await openPage(snippet);

    // Act
    await page.waitForFunction(() => (window as unknown as { ServiceWidget?: { isReady(): boolean } }).ServiceWidget?.isReady() === true);
    await widget(page).getByRole('button', { name: 'Open chat' }).click();
    await widget(page).getByRole('textbox', { name: 'Message' }).fill('what are your hours?');
    await widget(page).getByRole('textbox', { name: 'Message' }).press('Enter');
    const reply = finishedReply(page, 'echo: what are your hours?');
    await reply.waitFor();

    // Assess
    const log = await widget(page).getByRole('log', { name: 'Conversation' }).innerText();
    expect(log).toContain('Welcome to the shop!');
    expect(log).toContain('echo: what are your hours?');
    expect(log).not.toMatch(/__META__|__METRICS__|__TOOL__|conversationId/);
    expect(await page.evaluate(() => (window as unknown as { ServiceWidget: { version: string } }).ServiceWidget.version)).toBe(WIDGET_VERSION);
    // Isolated from the page's styles: its `* { color: red !important }` does not reach inside.
    expect(await reply.evaluate((el) => getComputedStyle(el).color)).not.toBe('rgb(255, 0, 0)');
    await page.close();
  });

  it('shows tool use while hiding the markers, and continues the conversation', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: toolId });
    const page = await openPage(snippet);
    await openWhenReady(page);

    // Act
    await widget(page).getByRole('textbox', { name: 'Message' }).fill('weather?');
    await widget(page).getByRole('button', { name: 'Send message' }).click();
    await finishedReply(page, 'done').waitFor();

    // Assess
    const log = await widget(page).getByRole('log', { name: 'Conversation' }).innerText();
    expect(log).toContain('Using weather');
    expect(log).toContain('Using calculator');
    expect(log).not.toContain('__');
    await page.close();
  });

  it('stays the same visitor when its credential is renewed, so the conversation continues', async () => {
    // Prepare
    const historyId = await createAgent('history-helper', fixture('history_agent'));
    const { snippet } = await embed({ agentId: historyId });
    const page = await openPage(snippet);
    type Exchange = { sent: { visitorToken?: string }; answer: { bearerToken: string; visitorToken: string } };
    const exchanges: Promise<Exchange>[] = [];
    page.on('response', (response) => {
      if (!response.url().endsWith('/embed/chat') || response.request().method() !== 'POST') return;
      exchanges.push(response.json().then((body) => ({ sent: response.request().postDataJSON(), answer: body.data })));
    });
    await openWhenReady(page);
    const input = widget(page).getByRole('textbox', { name: 'Message' });
    await input.fill('first');
    await input.press('Enter');
    await finishedReply(page, 'history=0').waitFor();
    // The next chat goes out with a credential the platform no longer accepts (as one past its
    // expiry), so the platform answers 401 and the widget asks for a new one.
    await page.route(
      (url) => url.pathname === `/stream/agent/${historyId}/chat`,
      (route) => route.continue({ headers: { ...route.request().headers(), authorization: 'Bearer svc_run_expired.x' } }),
      {
        times: 1,
      },
    );

    // Act
    await input.fill('second');
    await input.press('Enter');
    await finishedReply(page, 'history=2').waitFor();

    // Assess: Playwright reports responses as events, which can come after the page has used them.
    await expect.poll(() => exchanges.length).toBe(2);
    const [first, renewed] = await Promise.all(exchanges);
    expect(first?.sent.visitorToken).toBeUndefined();
    expect(renewed?.sent.visitorToken).toBe(first?.answer.visitorToken);
    expect(renewed?.answer.bearerToken).not.toBe(first?.answer.bearerToken);
    await page.close();
  });

  it('shows an error and gets no config on a disallowed origin', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: echoId, allowedDomains: ['shop.example.com'] });
    const configAnswers: number[] = [];
    const page = await browser.newPage();
    page.on('response', (response) => {
      if (response.url().includes('/embed/config')) configAnswers.push(response.status());
    });
    html.set('/disallowed.html', `<!doctype html><body><script>window.__events=[]</script>${snippet}</body>`);

    // Act
    await page.goto(`${pageOrigin}/disallowed.html`);
    await widget(page).getByRole('button', { name: 'Open chat' }).click();
    const alert = widget(page).getByRole('alert');
    await alert.waitFor();

    // Assess
    expect(await alert.innerText()).toContain('not enabled for this website');
    expect(configAnswers).toEqual([403]);
    expect(await page.evaluate(() => (window as unknown as { ServiceWidget: { isReady(): boolean } }).ServiceWidget.isReady())).toBe(false);
    expect(await widget(page).getByRole('textbox', { name: 'Message' }).isDisabled()).toBe(true);
    await page.close();
  });

  it('offers the JavaScript API and its events (open, close, switchTo, getMode, getActiveTab)', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: echoId, voiceAgentId: voiceId });
    const page = await openPage(snippet);
    await waitForEvent(page, 'ready');

    // Act
    const seen = await page.evaluate(() => {
      const api = (window as unknown as { ServiceWidget: Record<string, (...a: unknown[]) => unknown> }).ServiceWidget;
      const out: unknown[] = [api['getMode']!(), api['getActiveTab']!()];
      api['open']!();
      api['switchTo']!('voice');
      out.push(api['getActiveTab']!());
      api['switchTo']!('text');
      out.push(api['getActiveTab']!());
      api['close']!();
      return out;
    });

    // Assess
    expect(seen).toEqual(['both', 'text', 'voice', 'text']);
    expect((await events(page)).map((e) => e.event)).toEqual(['ready', 'open', 'close']);
    expect(await widget(page).getByRole('dialog').isHidden()).toBe(true);
    await page.close();
  });

  it('switches tabs with the arrow keys, moving focus and aria-selected with the tab', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: echoId, voiceAgentId: voiceId });
    const page = await openPage(snippet);
    await openWhenReady(page);
    const chatTab = widget(page).getByRole('tab', { name: 'Chat' });
    const voiceTab = widget(page).getByRole('tab', { name: 'Voice' });

    // Act
    await chatTab.focus();
    await page.keyboard.press('ArrowRight');
    const afterRight = await page.evaluate(() => (window as unknown as { ServiceWidget: { getActiveTab(): string } }).ServiceWidget.getActiveTab());
    const voiceSelected = await voiceTab.getAttribute('aria-selected');
    const voiceFocused = await voiceTab.evaluate((el) => (el.getRootNode() as unknown as { activeElement: unknown }).activeElement === el);
    await page.keyboard.press('ArrowLeft');
    const afterLeft = await page.evaluate(() => (window as unknown as { ServiceWidget: { getActiveTab(): string } }).ServiceWidget.getActiveTab());

    // Assess
    expect(afterRight).toBe('voice');
    expect(voiceSelected).toBe('true');
    expect(voiceFocused).toBe(true);
    expect(afterLeft).toBe('text');
    expect(await chatTab.getAttribute('aria-selected')).toBe('true');
    await page.close();
  });

  it('honours position, colour, size, title and greeting attributes, and is usable by keyboard', async () => {
    // Prepare
    const { embedToken } = await embed({ agentId: echoId });
    const tag = `<script src="${cdnUrl}/widget.js" data-token="${embedToken}" data-text-agent="${echoId}" data-position="bottom-left" data-color="#ff6600" data-size="compact" data-title="Shop Help" data-subtitle="We answer fast" data-greeting="Hello from attributes" data-placeholder="Type here"></script>`;
    const page = await openPage(tag);
    await page.waitForFunction(() => (window as unknown as { ServiceWidget?: { isReady(): boolean } }).ServiceWidget?.isReady());

    // Act
    await widget(page).getByRole('button', { name: 'Open chat' }).focus();
    await page.keyboard.press('Enter');
    const dialog = widget(page).getByRole('dialog', { name: 'Chat with Shop Help' });
    await dialog.waitFor();
    const box = await dialog.boundingBox();
    const launcherBox = await widget(page).locator('.launcher').boundingBox();
    const header = await widget(page)
      .locator('.header')
      .evaluate((el) => getComputedStyle(el).backgroundColor);
    const focused = await page.evaluate(() => document.querySelector('[data-service-widget]')?.shadowRoot?.activeElement?.getAttribute('aria-label'));
    const shown = await dialog.innerText();
    const placeholder = await widget(page).getByRole('textbox', { name: 'Message' }).getAttribute('placeholder');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => document.querySelector('[data-service-widget]')?.shadowRoot?.querySelector('.panel')?.hasAttribute('hidden'));

    // Assess
    expect(box).toMatchObject({ width: 340, height: 480 });
    expect(launcherBox!.x).toBeLessThan(100);
    expect(header).toBe('rgb(255, 102, 0)');
    expect(shown).toContain('We answer fast');
    expect(shown).toContain('Hello from attributes');
    expect(placeholder).toBe('Type here');
    expect(focused).toBe('Message');
    await page.close();
  });

  it('auto-opens after the page has rendered and the delay, and a custom trigger replaces the button', async () => {
    // Prepare
    const { embedToken } = await embed({ agentId: echoId });
    const tag = `<script src="${cdnUrl}/widget.js" data-token="${embedToken}" data-text-agent="${echoId}" data-auto-open data-auto-open-delay="300" data-trigger="#help"></script>`;
    const page = await openPage(tag, '<button id="help">Need help?</button>');

    // Act
    await waitForEvent(page, 'open');
    const order = await page.evaluate(() => ({
      loaded: document.readyState,
      events: (window as unknown as { __events: { event: string }[] }).__events.map((e) => e.event),
    }));
    const launcherHidden = await widget(page).locator('.launcher').isHidden();
    await page.click('#help');
    await waitForEvent(page, 'close');
    await page.click('#help');

    // Assess
    expect(order).toEqual({ loaded: 'complete', events: ['ready', 'open'] });
    expect(launcherHidden).toBe(true);
    await widget(page).getByRole('dialog').waitFor();
    expect((await events(page)).map((e) => e.event)).toEqual(['ready', 'open', 'close', 'open']);
    await page.close();
  });

  it('does not auto-open when data-auto-open is "false"', async () => {
    // Prepare
    const { embedToken } = await embed({ agentId: echoId, autoOpen: true });
    const page = await openPage(`<script src="${cdnUrl}/widget.js" data-token="${embedToken}" data-auto-open="false"></script>`);

    // Act
    await page.waitForFunction(() => (window as unknown as { ServiceWidget?: { isReady(): boolean } }).ServiceWidget?.isReady());
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve, 50)))));

    // Assess
    expect(await widget(page).getByRole('dialog').isHidden()).toBe(true);
    await page.close();
  });

  it('shows the limit in the panel once the token’s credit limit is spent', async () => {
    // Prepare
    const { snippet } = await embed({ agentId: echoId, creditLimit: 1 });
    const page = await openPage(snippet);
    await openWhenReady(page);
    const input = widget(page).getByRole('textbox', { name: 'Message' });

    // Act
    await input.fill('first');
    await input.press('Enter');
    await finishedReply(page, 'echo: first').waitFor();
    await input.fill('second');
    await input.press('Enter');
    const alert = widget(page).getByRole('alert');
    await alert.waitFor();

    // Assess
    expect(await alert.innerText()).toContain('credit limit');
    expect(await widget(page).locator('.bubble.assistant').filter({ hasText: 'echo: second' }).count()).toBe(0);
    await page.close();
  });

  it('talks over the voice tab: microphone to the voice agent, voiceStart, transcripts and voiceEnd', async () => {
    // Prepare
    const { snippet, embedTokenId } = await embed({ voiceAgentId: voiceId, minutesLimit: 5 });
    const page = await openPage(snippet);
    await waitForEvent(page, 'ready');
    await page.evaluate(() => (window as unknown as { ServiceWidget: { open(): void } }).ServiceWidget.open());

    // Act
    await widget(page).getByRole('button', { name: 'Start voice chat' }).click();
    await waitForEvent(page, 'voiceStart');
    await page.waitForFunction(() =>
      (window as unknown as { __events: { event: string; data?: { role: string } }[] }).__events.some(
        (e) => e.event === 'transcript' && e.data?.role === 'user',
      ),
    );
    await widget(page).getByRole('button', { name: 'End voice chat' }).click();
    await waitForEvent(page, 'voiceEnd');
    const listed = await platform.api('GET', '/embed/list?limit=100', { token: owner.token });

    // Assess
    const names = (await events(page)).map((e) => e.event);
    expect(names.slice(0, 3)).toEqual(['ready', 'open', 'voiceStart']);
    expect(names.at(-1)).toBe('voiceEnd');
    const transcripts = (await events(page)).filter((e) => e.event === 'transcript').map((e) => e.data as { text: string; role: string; is_final: boolean });
    expect(transcripts).toContainEqual({ role: 'user', is_final: true, text: expect.stringMatching(/^heard \d+ bytes$/) });
    // 16 kHz PCM16 in 20 ms frames: 640 bytes each, as the echo agent heard them.
    expect(transcripts.map((t) => t.text)).toContain('heard 640 bytes');
    const token = listed.body.data.tokens.find((t: { embedTokenId: string }) => t.embedTokenId === embedTokenId);
    expect(token.minutesUsed).toBeGreaterThan(0);
    await page.close();
  });

  it('stops playback at once when the agent is interrupted', async () => {
    // Prepare: an agent that answers the caller's first audio with 3 s of speech at once, then,
    // half a second of caller audio later, reports that the caller talked over it. The page counts
    // the audio sources the widget schedules and stops.
    const interruptedId = await createAgent('voice-interrupted', INTERRUPTED_AGENT, { agentType: 'bidi' });
    const { snippet } = await embed({ voiceAgentId: interruptedId });
    const page = await browser.newPage();
    await page.addInitScript({ content: RECORD_EVENTS });
    // A string: this file is compiled without the DOM library.
    await page.addInitScript({
      content: `(() => {
        const counts = (window.__sources = { started: 0, stopped: 0 });
        const prototype = AudioBufferSourceNode.prototype;
        const start = prototype.start;
        const stop = prototype.stop;
        prototype.start = function (...args) { counts.started++; return start.apply(this, args); };
        prototype.stop = function (...args) { counts.stopped++; return stop.apply(this, args); };
      })();`,
    });
    html.set('/interrupted', `<!doctype html><html><body>${snippet}</body></html>`);
    await page.goto(`${pageOrigin}/interrupted`);
    await waitForEvent(page, 'ready');
    await page.evaluate(() => (window as unknown as { ServiceWidget: { open(): void } }).ServiceWidget.open());

    // Act
    await widget(page).getByRole('button', { name: 'Start voice chat' }).click();
    await page.waitForFunction(() =>
      (window as unknown as { __events: { event: string; data?: { text?: string } }[] }).__events.some(
        (e) => e.event === 'transcript' && e.data?.text === 'talked over',
      ),
    );
    const counts = await page.evaluate(() => (window as unknown as { __sources: { started: number; stopped: number } }).__sources);
    await widget(page).getByRole('button', { name: 'End voice chat' }).click();
    await waitForEvent(page, 'voiceEnd');
    await page.close();

    // Assess: speech was scheduled ahead, and what had not played was stopped on `interrupted`
    expect(counts.started).toBeGreaterThan(0);
    expect(counts.stopped).toBeGreaterThan(0);
  });

  it('opens no voice session when the caller ends it while the audio is starting', async () => {
    // Prepare: the audio context's start completes only once the test lets it, after the caller has
    // pressed End; the page counts the sockets it opens.
    const { snippet } = await embed({ agentId: echoId, voiceAgentId: voiceId });
    const heldResume = `(() => {
      window.__sockets = 0;
      const Native = WebSocket;
      window.WebSocket = class extends Native {
        constructor(...args) { super(...args); window.__sockets++; }
      };
      let release;
      const held = new Promise((resolve) => (release = resolve));
      window.__releaseResume = () => release();
      const resume = AudioContext.prototype.resume;
      AudioContext.prototype.resume = async function (...args) {
        await resume.apply(this, args);
        window.__resumeHeld = true;
        await held;
        window.__resumeDone = true;
      };
    })();`;
    const page = await openPage(`${snippet.replace('></script>', ' data-default-tab="voice"></script>')}`, undefined, heldResume);
    await openWhenReady(page);
    await widget(page).getByRole('button', { name: 'Start voice chat' }).click();
    await page.waitForFunction(() => (window as unknown as { __resumeHeld?: boolean }).__resumeHeld);

    // Act
    await widget(page).getByRole('button', { name: 'End voice chat' }).click();
    await page.evaluate(() => (window as unknown as { __releaseResume(): void }).__releaseResume());
    await page.waitForFunction(() => (window as unknown as { __resumeDone?: boolean }).__resumeDone);

    // Assess: no socket was opened, nothing went wrong on screen, and voice can start again
    expect(await page.evaluate(() => (window as unknown as { __sockets: number }).__sockets)).toBe(0);
    expect(await widget(page).getByRole('alert').count()).toBe(0);
    expect(await widget(page).getByRole('button', { name: 'Start voice chat' }).getAttribute('aria-pressed')).toBe('false');
    await page.close();
  });

  it('refuses voice once the token’s minutes are spent', async () => {
    // Prepare: a limit already used up.
    const { snippet, embedTokenId } = await embed({ agentId: echoId, voiceAgentId: voiceId, minutesLimit: 0.001 });
    await platform.running.ports.embeds.addUsage(embedTokenId, { minutes: 1 });
    // The microphone's worklet finishes loading only after the refusal has closed the socket: the
    // order that once lost the refusal, made certain here instead of left to timing.
    const refusalFirst = `(() => {
      let closed;
      const seen = new Promise((resolve) => (closed = resolve));
      const Native = WebSocket;
      window.WebSocket = class extends Native {
        constructor(...args) { super(...args); this.addEventListener('close', () => closed()); }
      };
      const addModule = AudioWorklet.prototype.addModule;
      AudioWorklet.prototype.addModule = async function (...args) {
        await seen;
        try { return await addModule.apply(this, args); } finally { window.__workletSettled = true; }
      };
    })();`;
    const page = await openPage(`${snippet.replace('></script>', ' data-default-tab="voice"></script>')}`, undefined, refusalFirst);
    await openWhenReady(page);

    // Act
    await widget(page).getByRole('button', { name: 'Start voice chat' }).click();
    const alert = widget(page).getByRole('alert');
    await alert.waitFor();
    await page.waitForFunction(() => (window as unknown as { __workletSettled?: boolean }).__workletSettled);

    // Assess: the refusal's reason stays on screen once the worklet's load settles, and the session is released
    expect(await alert.innerText()).toContain('voice minutes');
    expect(await widget(page).getByRole('button', { name: 'Start voice chat' }).getAttribute('aria-pressed')).toBe('false');
    await page.close();
  });
});
