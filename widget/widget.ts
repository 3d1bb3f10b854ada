/**
 * The embed widget (SPEC 4.10, part 6): one script tag puts a text and voice chat on any page.
 * Everything lives in a shadow root, so the page's styles cannot reach it and its own stay inside.
 * The embed token is publishable; the platform checks the page's Origin and hands out a
 * short-lived credential for the embed's agents only (POST /embed/chat).
 */
import { capture, Player } from './audio.ts';
import { Downsampler } from './downsample.ts';
import { MarkerParser } from './markers.ts';
import { STYLES } from './styles.ts';
import { WIDGET_VERSION } from './version.ts';

type Mode = 'text' | 'voice' | 'both';
type Tab = 'text' | 'voice';
type WidgetEvent = 'ready' | 'open' | 'close' | 'voiceStart' | 'voiceEnd' | 'transcript';
type Listener = (data?: unknown) => void;

/** `GET /embed/config`'s data. */
interface RemoteConfig {
  agentId: string | null;
  voiceAgentId: string | null;
  agentName: string | null;
  greeting: string | null;
  color: string;
  position: string;
  mode: Mode;
  title?: string | null;
  subtitle?: string | null;
  logoUrl?: string | null;
  initialPrompt?: string | null;
  placeholder?: string;
  size?: string;
  autoOpen?: boolean;
  autoOpenDelay?: number;
}

/** `POST /embed/chat`'s data. */
interface Session {
  bearerToken: string;
  visitorToken?: string;
  streamUrl: string | null;
  voiceUrl?: string;
  expiresAt: number;
}

const SIZES: Record<string, [number, number]> = { compact: [340, 480], standard: [400, 580], large: [440, 640] };
const MAX_AUTO_OPEN_DELAY = 30_000;

/**
 * Where the widget keeps the visitor token of one embed. sessionStorage, not localStorage: the
 * conversation id lives in memory (a new page starts a new conversation), so the visitor only
 * needs to outlast bearer renewals and reloads in this tab; a longer-lived id in the host site's
 * storage would be a tracking id, and the next person at a shared computer would inherit it.
 * Storage can throw (blocked cookies, sandboxed frames): memory is the fallback.
 */
class VisitorStore {
  private memory: string | undefined;
  constructor(private readonly key: string) {}

  get(): string | undefined {
    try {
      return sessionStorage.getItem(this.key) ?? this.memory;
    } catch {
      return this.memory;
    }
  }

  set(value: string): void {
    this.memory = value;
    try {
      sessionStorage.setItem(this.key, value);
    } catch {
      // Memory holds it for this page.
    }
  }
}

/** Why a request failed, as a visitor should read it. */
class WidgetError extends Error {}

function messageFor(status: number, body: { error?: string | { message?: string } } | null): string {
  const detail = typeof body?.error === 'string' ? body.error : body?.error?.message;
  if (status === 401) return 'This chat is not available: its embed token is invalid or was revoked.';
  if (status === 403)
    return detail?.includes('allowedDomains') || detail?.includes('site') ? 'This chat is not enabled for this website.' : 'This chat has been turned off.';
  if (status === 429) return detail?.includes('limit') && !detail.includes('Rate') ? detail : 'Too many conversations right now; please try again later.';
  if (status === 402) return 'The assistant is unavailable right now.';
  return detail ?? 'Something went wrong; please try again.';
}

async function failure(response: Response): Promise<WidgetError> {
  const body = (await response.json().catch(() => null)) as { error?: string | { message?: string } } | null;
  return new WidgetError(messageFor(response.status, body));
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'class') el.className = value;
    else el.setAttribute(name, value);
  }
  el.append(...children);
  return el;
}

/** The attribute, trimmed; undefined when absent or empty. */
function attr(script: HTMLScriptElement, name: string): string | undefined {
  const value = script.getAttribute(`data-${name}`);
  return value === null || value.trim() === '' ? undefined : value.trim();
}

/** `data-auto-open`: present (any value or empty) enables, `false` or `0` disables. */
function flag(script: HTMLScriptElement, name: string): boolean | undefined {
  const value = script.getAttribute(`data-${name}`);
  if (value === null) return undefined;
  return !['false', '0'].includes(value.trim().toLowerCase());
}

/** The API's base: `data-api`, else derived from the script's own address (the local layout `/cdn/...`). */
function apiBase(script: HTMLScriptElement): string {
  const given = attr(script, 'api');
  if (given) return given.replace(/\/+$/, '');
  const src = new URL(script.src, location.href);
  const cdn = src.pathname.indexOf('/cdn/');
  return cdn === -1 ? src.origin : src.origin + src.pathname.slice(0, cdn);
}

class Widget {
  private readonly listeners = new Map<WidgetEvent, Set<Listener>>();
  private readonly token: string;
  private readonly apiUrl: string;
  private mode: Mode;
  private tab: Tab = 'text';
  private ready = false;
  private isOpen = false;
  private config: RemoteConfig | null = null;
  private session: Session | null = null;
  private conversationId: string | undefined;
  private readonly visitor: VisitorStore;
  private busy = false;
  private openedOnce = false;
  private trigger: Element | null = null;

  // Elements, made in `render`.
  private readonly host = h('div', { 'data-service-widget': WIDGET_VERSION });
  private readonly root: ShadowRoot;
  private launcher!: HTMLButtonElement;
  private panel!: HTMLDivElement;
  private messages!: HTMLDivElement;
  private input!: HTMLInputElement;
  private sendButton!: HTMLButtonElement;
  private errorBox!: HTMLDivElement;
  private tabs!: HTMLDivElement;
  private textView!: HTMLDivElement;
  private voiceView!: HTMLDivElement;
  private voiceButton!: HTMLButtonElement;
  private voiceStatus!: HTMLDivElement;
  private transcripts!: HTMLDivElement;
  private title!: HTMLElement;
  private subtitle!: HTMLElement;
  private logo!: HTMLImageElement;

  // Voice.
  private socket: WebSocket | null = null;
  private audio: AudioContext | null = null;
  private player: Player | null = null;
  private stopCapture: (() => void) | null = null;
  private mic: MediaStream | null = null;
  private voiceActive = false;
  /** Counts voice starts, so a start that was ended (and perhaps followed by another) stops at its next step. */
  private voiceAttempt = 0;

  constructor(private readonly script: HTMLScriptElement) {
    this.token = attr(script, 'token') ?? '';
    this.apiUrl = apiBase(script);
    this.visitor = new VisitorStore(`svc-visitor:${this.token}`);
    const text = attr(script, 'text-agent');
    const voice = attr(script, 'voice-agent');
    this.mode = (attr(script, 'mode') as Mode | undefined) ?? (text && voice ? 'both' : voice ? 'voice' : 'text');
    this.root = this.host.attachShadow({ mode: 'open' });
  }

  /** The public API (SPEC 4.10). */
  publicApi(): Record<string, unknown> {
    return {
      version: WIDGET_VERSION,
      open: () => this.open(),
      close: () => this.close(),
      switchTo: (tab: Tab) => this.switchTo(tab),
      on: (event: WidgetEvent, callback: Listener) => {
        const set = this.listeners.get(event) ?? new Set<Listener>();
        set.add(callback);
        this.listeners.set(event, set);
        // A `ready` listener added after the widget is ready still hears it.
        if (event === 'ready' && this.ready) queueMicrotask(() => callback());
        return () => set.delete(callback);
      },
      getMode: () => this.mode,
      getActiveTab: () => this.tab,
      isReady: () => this.ready,
    };
  }

  private emit(event: WidgetEvent, data?: unknown): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        listener(data);
      } catch (error) {
        console.error('ServiceWidget listener failed', error);
      }
    }
  }

  async start(): Promise<void> {
    this.render();
    document.body.append(this.host);
    if (!this.token) return this.showError('This chat is not set up: the script tag has no data-token.');
    try {
      const response = await fetch(`${this.apiUrl}/embed/config?token=${encodeURIComponent(this.token)}`);
      if (!response.ok) throw await failure(response);
      this.config = ((await response.json()) as { data: RemoteConfig }).data;
    } catch (error) {
      return this.showError(error instanceof WidgetError ? error.message : 'The chat could not be reached.');
    }
    this.applyConfig(this.config);
    this.ready = true;
    this.emit('ready');
    this.scheduleAutoOpen();
  }

  private setting<T>(name: string, remote: T | null | undefined, fallback: T): T | string {
    return attr(this.script, name) ?? remote ?? fallback;
  }

  private applyConfig(config: RemoteConfig): void {
    if (!attr(this.script, 'mode')) this.mode = config.mode;
    const color = String(this.setting('color', config.color, '#6366f1'));
    const position = String(this.setting('position', config.position, 'bottom-right')) === 'bottom-left' ? 'bottom-left' : 'bottom-right';
    const [width, height] = SIZES[String(this.setting('size', config.size, 'standard'))] ?? SIZES['standard']!;
    this.host.style.setProperty('--svc-color', /^#[0-9a-f]{3,8}$/i.test(color) ? color : '#6366f1');
    this.host.style.setProperty('--svc-width', `${width}px`);
    this.host.style.setProperty('--svc-height', `${height}px`);
    this.host.setAttribute('data-position', position);
    this.host.setAttribute('data-size', String(this.setting('size', config.size, 'standard')));
    const name = String(this.setting('title', config.title, config.agentName ?? 'Assistant'));
    this.title.textContent = name;
    this.panel.setAttribute('aria-label', `Chat with ${name}`);
    this.subtitle.textContent = String(this.setting('subtitle', config.subtitle, ''));
    const logo = String(this.setting('logo', config.logoUrl, ''));
    if (logo) {
      this.logo.src = logo;
      this.logo.hidden = false;
    }
    this.input.placeholder = String(this.setting('placeholder', config.placeholder, 'Ask me anything...'));
    const greeting = String(this.setting('greeting', config.greeting, ''));
    if (greeting && this.mode !== 'voice') this.bubble('assistant', greeting).classList.add('greeting');
    const defaultTab = attr(this.script, 'default-tab') === 'voice' ? 'voice' : 'text';
    this.showTab(this.mode === 'both' ? defaultTab : this.mode);
    this.tabs.hidden = this.mode !== 'both';
    this.input.disabled = false;
    this.sendButton.disabled = false;
    // A custom trigger replaces the button.
    const selector = attr(this.script, 'trigger');
    if (selector) {
      this.trigger = document.querySelector(selector);
      if (this.trigger) {
        this.launcher.hidden = true;
        this.trigger.addEventListener('click', (event) => {
          event.preventDefault();
          if (this.isOpen) this.close();
          else {
            this.open();
            if (this.tab === 'voice' && !this.voiceActive) void this.startVoice();
          }
        });
      }
    }
  }

  /** Two-phase: after the page has loaded and painted (two frames), then the delay. */
  private scheduleAutoOpen(): void {
    const enabled = flag(this.script, 'auto-open') ?? this.config?.autoOpen ?? false;
    if (!enabled) return;
    const given = Number(attr(this.script, 'auto-open-delay') ?? this.config?.autoOpenDelay ?? 0);
    const delay = Math.min(MAX_AUTO_OPEN_DELAY, Math.max(0, Number.isFinite(given) ? given : 0));
    const afterRender = () => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => this.open(), delay)));
    if (document.readyState === 'complete') afterRender();
    else window.addEventListener('load', afterRender, { once: true });
  }

  private render(): void {
    const style = h('style');
    style.textContent = STYLES;
    this.launcher = h('button', { class: 'launcher', type: 'button', 'aria-label': 'Open chat', 'aria-expanded': 'false', 'aria-controls': 'svc-panel' });
    this.launcher.innerHTML = '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16v12H7l-3 3z" fill="currentColor"/></svg>';
    this.launcher.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));

    this.logo = h('img', { class: 'logo', alt: '' });
    this.logo.hidden = true;
    this.title = h('strong', { class: 'title' }, 'Assistant');
    this.subtitle = h('span', { class: 'subtitle' });
    const closeButton = h('button', { class: 'close', type: 'button', 'aria-label': 'Close chat' }, '×');
    closeButton.addEventListener('click', () => this.close());
    const header = h('div', { class: 'header' }, this.logo, h('div', { class: 'titles' }, this.title, this.subtitle), closeButton);

    const textTab = h('button', { role: 'tab', type: 'button', id: 'svc-tab-text', 'aria-controls': 'svc-text', 'data-tab': 'text' }, 'Chat');
    const voiceTab = h('button', { role: 'tab', type: 'button', id: 'svc-tab-voice', 'aria-controls': 'svc-voice', 'data-tab': 'voice' }, 'Voice');
    this.tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Chat mode' }, textTab, voiceTab);
    this.tabs.hidden = true;
    for (const tab of [textTab, voiceTab]) tab.addEventListener('click', () => this.switchTo(tab.dataset['tab'] as Tab));
    this.tabs.addEventListener('keydown', (event) => {
      if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
      this.switchTo(this.tab === 'text' ? 'voice' : 'text');
      (this.tab === 'text' ? textTab : voiceTab).focus();
    });

    this.errorBox = h('div', { class: 'error', role: 'alert' });
    this.errorBox.hidden = true;

    this.messages = h('div', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation' });
    this.input = h('input', { class: 'input', type: 'text', 'aria-label': 'Message', autocomplete: 'off' });
    this.input.disabled = true;
    this.sendButton = h('button', { class: 'send', type: 'submit', 'aria-label': 'Send message' }, 'Send');
    this.sendButton.disabled = true;
    const form = h('form', { class: 'composer' }, this.input, this.sendButton);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const prompt = this.input.value.trim();
      if (!prompt || this.busy) return;
      this.input.value = '';
      void this.send(prompt);
    });
    this.textView = h('div', { class: 'view', id: 'svc-text', role: 'tabpanel', 'aria-labelledby': 'svc-tab-text' }, this.messages, form);

    this.voiceButton = h('button', { class: 'mic', type: 'button', 'aria-label': 'Start voice chat', 'aria-pressed': 'false' });
    this.voiceButton.innerHTML =
      '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1a7 7 0 0 0 6-6.9z" fill="currentColor"/></svg>';
    this.voiceButton.addEventListener('click', () => void (this.voiceActive ? this.stopVoice() : this.startVoice()));
    this.voiceStatus = h('div', { class: 'voice-status', role: 'status' }, 'Press the microphone to talk.');
    this.transcripts = h('div', { class: 'transcripts', role: 'log', 'aria-live': 'polite', 'aria-label': 'Voice transcript' });
    this.voiceView = h(
      'div',
      { class: 'view voice', id: 'svc-voice', role: 'tabpanel', 'aria-labelledby': 'svc-tab-voice' },
      this.voiceButton,
      this.voiceStatus,
      this.transcripts,
    );
    this.voiceView.hidden = true;

    this.panel = h(
      'div',
      { class: 'panel', id: 'svc-panel', role: 'dialog', 'aria-label': 'Chat', 'aria-modal': 'false' },
      header,
      this.tabs,
      this.errorBox,
      this.textView,
      this.voiceView,
    );
    this.panel.hidden = true;
    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') this.close();
    });
    this.root.append(style, this.panel, this.launcher);
  }

  private showError(message: string): void {
    this.errorBox.textContent = message;
    this.errorBox.hidden = false;
  }

  private clearError(): void {
    this.errorBox.hidden = true;
    this.errorBox.textContent = '';
  }

  open(): void {
    if (this.isOpen) return;
    this.isOpen = true;
    this.panel.hidden = false;
    this.launcher.setAttribute('aria-expanded', 'true');
    this.launcher.setAttribute('aria-label', 'Close chat');
    this.host.setAttribute('data-open', '');
    (this.tab === 'text' && !this.input.disabled ? this.input : this.panel.querySelector<HTMLElement>('.close'))?.focus();
    this.emit('open');
    // The initial prompt's reply is the opening message; sent on the first open, not on every page view.
    const initialPrompt = this.config ? String(this.setting('initial-prompt', this.config.initialPrompt, '')) : '';
    if (!this.openedOnce && initialPrompt && this.ready && this.mode !== 'voice') void this.send(initialPrompt, { hidden: true });
    this.openedOnce = true;
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.panel.hidden = true;
    this.host.removeAttribute('data-open');
    this.launcher.setAttribute('aria-expanded', 'false');
    this.launcher.setAttribute('aria-label', 'Open chat');
    if (this.voiceActive) void this.stopVoice();
    (this.trigger instanceof HTMLElement ? this.trigger : this.launcher).focus();
    this.emit('close');
  }

  switchTo(tab: Tab): void {
    if (this.mode !== 'both' || (tab !== 'text' && tab !== 'voice')) return;
    if (tab !== 'voice' && this.voiceActive) void this.stopVoice();
    this.showTab(tab);
  }

  private showTab(tab: Tab): void {
    this.tab = tab;
    this.textView.hidden = tab !== 'text';
    this.voiceView.hidden = tab !== 'voice';
    for (const button of this.tabs.querySelectorAll<HTMLButtonElement>('[role=tab]')) {
      const selected = button.dataset['tab'] === tab;
      button.setAttribute('aria-selected', String(selected));
      button.tabIndex = selected ? 0 : -1;
    }
  }

  private bubble(role: 'user' | 'assistant' | 'tool', text: string): HTMLDivElement {
    const el = h('div', { class: `bubble ${role}` }, text);
    this.messages.append(el);
    this.messages.scrollTop = this.messages.scrollHeight;
    return el;
  }

  /**
   * A credential for this embed's agents, kept until shortly before it expires. The visitor token
   * goes with every request, so a renewed credential is the same visitor and may continue its chat.
   */
  private async credential(renew = false): Promise<Session> {
    if (!renew && this.session && this.session.expiresAt - 60_000 > Date.now()) return this.session;
    const visitorToken = this.visitor.get();
    const response = await fetch(`${this.apiUrl}/embed/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: this.token, ...(visitorToken ? { visitorToken } : {}) }),
    });
    if (!response.ok) throw await failure(response);
    this.session = ((await response.json()) as { data: Session }).data;
    if (this.session.visitorToken) this.visitor.set(this.session.visitorToken);
    return this.session;
  }

  /** Sends a prompt and streams the reply into a bubble as it arrives; markers never reach the page. */
  private async send(prompt: string, options: { hidden?: boolean } = {}): Promise<void> {
    this.busy = true;
    this.sendButton.disabled = true;
    this.clearError();
    if (!options.hidden) this.bubble('user', prompt);
    const reply = this.bubble('assistant', '');
    reply.classList.add('pending');
    reply.setAttribute('aria-busy', 'true');
    try {
      let response = await this.chat(prompt, await this.credential());
      // An expired credential is renewed once.
      if (response.status === 401) response = await this.chat(prompt, await this.credential(true));
      if (!response.ok || !response.body) throw await failure(response);
      const parser = new MarkerParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      for (;;) {
        const { value, done } = await reader.read();
        const parts = done ? parser.end() : parser.push(value);
        for (const part of parts) {
          if (part.kind === 'text') {
            text += part.text;
            reply.textContent = text;
            reply.classList.remove('pending');
          } else if (part.kind === 'meta') this.conversationId = part.conversationId || this.conversationId;
          else if (part.kind === 'tool') this.messages.insertBefore(h('div', { class: 'bubble tool', role: 'status' }, `Using ${part.name}…`), reply);
          else this.showError(part.message);
        }
        this.messages.scrollTop = this.messages.scrollHeight;
        if (done) break;
      }
      if (!text) reply.remove();
    } catch (error) {
      reply.remove();
      this.showError(error instanceof WidgetError ? error.message : 'The assistant could not be reached; please try again.');
    } finally {
      reply.removeAttribute('aria-busy');
      reply.classList.remove('pending');
      this.busy = false;
      this.sendButton.disabled = false;
    }
  }

  private chat(prompt: string, session: Session): Promise<Response> {
    if (session.streamUrl === null) throw new WidgetError('This chat has no text agent.');
    return fetch(session.streamUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${session.bearerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt, ...(this.conversationId ? { conversationId: this.conversationId } : {}) }),
    });
  }

  /** Microphone → 16 kHz PCM16 over the voice WebSocket; the 24 kHz answer is played as it comes. */
  private async startVoice(): Promise<void> {
    if (this.voiceActive) return;
    this.voiceActive = true;
    const attempt = ++this.voiceAttempt;
    // The caller may end the session at any await below; `releaseVoice` has then run, and this start
    // must open nothing more (a socket opened now would be a session nobody hears, billed until idle).
    const ended = () => !this.voiceActive || this.voiceAttempt !== attempt;
    this.clearError();
    this.voiceButton.setAttribute('aria-pressed', 'true');
    this.voiceButton.setAttribute('aria-label', 'End voice chat');
    this.voiceStatus.textContent = 'Connecting…';
    try {
      const session = await this.credential();
      if (ended()) return;
      if (!session.voiceUrl) throw new WidgetError('Voice chat is not available here.');
      const mic = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } }).catch(() => {
        throw new WidgetError('Voice chat needs access to your microphone.');
      });
      if (ended()) {
        for (const track of mic.getTracks()) track.stop();
        return;
      }
      this.mic = mic;
      const audio = new AudioContext();
      this.audio = audio;
      await audio.resume();
      if (ended()) return;
      this.player = new Player(audio);
      const socket = new WebSocket(`${session.voiceUrl}?token=${encodeURIComponent(session.bearerToken)}`);
      socket.binaryType = 'arraybuffer';
      this.socket = socket;
      // The handlers go on before anything else is awaited: a refusal (minutes spent, token off) can
      // close the socket while the microphone's worklet loads, and an event with no handler is lost.
      let started = false;
      socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => {
        if (typeof event.data !== 'string') return this.player?.play(event.data);
        const frame = JSON.parse(event.data) as { type: string; text?: string; role?: string; is_final?: boolean; message?: string; code?: string };
        if (frame.type === 'ready' && !started) {
          started = true;
          this.voiceStatus.textContent = 'Listening…';
          this.emit('voiceStart');
        } else if (frame.type === 'interrupted') this.player?.stop();
        else if (frame.type === 'transcript') {
          const data = { text: frame.text ?? '', role: frame.role ?? 'assistant', is_final: frame.is_final ?? true };
          if (data.is_final) this.transcripts.append(h('div', { class: `bubble ${data.role === 'user' ? 'user' : 'assistant'}` }, data.text));
          this.emit('transcript', data);
        } else if (frame.type === 'error')
          this.showError(frame.code === 'QUOTA_EXCEEDED' ? 'This chat has used up its voice minutes.' : (frame.message ?? 'Voice chat failed.'));
      };
      socket.onclose = (event) => {
        if (event.code === 4429) this.showError('This chat has used up its voice minutes.');
        else if (event.code === 4403) this.showError('This chat has been turned off.');
        else if (event.code >= 4000 && event.code !== 4408 && !started) this.showError(event.reason || 'Voice chat could not start.');
        this.releaseVoice();
        if (started) this.emit('voiceEnd');
      };
      const downsampler = new Downsampler(audio.sampleRate, (frame) => {
        if (socket.readyState === WebSocket.OPEN) socket.send(frame);
      });
      const stopCapture = await capture(audio, mic, (block) => downsampler.push(block));
      // The session may have ended while the worklet loaded; its release has already run.
      if (ended()) return stopCapture();
      this.stopCapture = stopCapture;
    } catch (error) {
      // A session that already ended (its socket closed and said why) keeps that reason on screen.
      if (ended()) return;
      this.showError(error instanceof WidgetError ? error.message : 'Voice chat could not start.');
      this.releaseVoice();
    }
  }

  private async stopVoice(): Promise<void> {
    const socket = this.socket;
    // The bridge ends the session (billing, `session_end`) and then closes; `onclose` releases the rest.
    if (socket && socket.readyState === WebSocket.OPEN) {
      this.stopCapture?.();
      this.stopCapture = null;
      socket.send(JSON.stringify({ type: 'end' }));
      this.voiceStatus.textContent = 'Ending…';
      return;
    }
    this.releaseVoice();
  }

  private releaseVoice(): void {
    this.voiceActive = false;
    this.stopCapture?.();
    this.stopCapture = null;
    this.player?.stop();
    this.player = null;
    for (const track of this.mic?.getTracks() ?? []) track.stop();
    this.mic = null;
    void this.audio?.close().catch(() => undefined);
    this.audio = null;
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close();
    this.socket = null;
    this.voiceButton.setAttribute('aria-pressed', 'false');
    this.voiceButton.setAttribute('aria-label', 'Start voice chat');
    this.voiceStatus.textContent = 'Press the microphone to talk.';
  }
}

/** The script tag that loaded this file: `currentScript` while it runs, else the one with our token attribute. */
function ownScript(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement) return current;
  return document.querySelector<HTMLScriptElement>('script[data-token][src*="widget"]');
}

const script = ownScript();
const globals = window as unknown as { ServiceWidget?: unknown };
if (script && !globals.ServiceWidget) {
  const widget = new Widget(script);
  globals.ServiceWidget = Object.freeze(widget.publicApi());
  const begin = () => void widget.start();
  if (document.body) begin();
  else document.addEventListener('DOMContentLoaded', begin, { once: true });
}
