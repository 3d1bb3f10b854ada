import { UpstreamError } from '../core/errors.ts';
import { ownerSafeText } from './channel-failure.ts';
import type { Platform } from './channel.schema.ts';
import type { ReplyTarget } from './platforms.ts';

/**
 * The platforms' own services. Each base URL is read from `CHANNEL_API_BASE_<PLATFORM>` (all phone
 * kinds from `CHANNEL_API_BASE_PHONE`) so tests point them at loopback stand-ins.
 */
export const DEFAULT_API_BASES = {
  CHANNEL_API_BASE_WORKSPACE_CHAT: 'https://slack.com/api',
  CHANNEL_API_BASE_COMMUNITY_CHAT: 'https://discord.com/api/v10',
  CHANNEL_API_BASE_BOT_MESSENGER: 'https://api.telegram.org',
  CHANNEL_API_BASE_PHONE_MESSENGER: 'https://graph.facebook.com/v21.0',
  CHANNEL_API_BASE_PHONE: 'https://api.twilio.com',
} as const;

export type ApiBases = { readonly [K in keyof typeof DEFAULT_API_BASES]: string };

export interface PlatformApiPorts {
  readonly fetch: typeof fetch;
  readonly config: ApiBases;
}

const trim = (url: string) => url.replace(/\/+$/, '');

/**
 * The outside service behind each platform kind, as owners know it: "platform" means this server
 * everywhere else, so a message about Telegram's API says "Telegram".
 */
export const SERVICE_NAMES = {
  'workspace-chat': 'Slack',
  'community-chat': 'Discord',
  'bot-messenger': 'Telegram',
  'phone-messenger': 'WhatsApp (Meta)',
  'phone-voice': 'Twilio',
  'phone-sms': 'Twilio',
  'phone-unified': 'Twilio',
} as const satisfies Record<Exclude<Platform, 'webhook'>, string>;

type Service = (typeof SERVICE_NAMES)[keyof typeof SERVICE_NAMES];

/** The most a service's own error text adds to a message: enough to name the problem, never a page. */
const DETAIL_MAX_CHARS = 160;

/**
 * The service's own short word on a refusal, from the body it answered with: Slack's `error`,
 * Telegram's `description`, Meta's `error.message`, Twilio's and Discord's `message` with their
 * `code`. Cut short, URLs left out (a Telegram bot token sits in a URL's path; Twilio's `more_info`
 * is one), and secrets handed out in this request replaced.
 */
function serviceDetail(body: Record<string, unknown>): string {
  const text = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
  const nested = body['error'] !== null && typeof body['error'] === 'object' ? (body['error'] as Record<string, unknown>) : {};
  const message = text(body['error']) || text(body['description']) || text(nested['message']) || text(body['message']);
  const code = text(body['code']) || text(nested['code']);
  return ownerSafeText(code !== '' && message !== '' ? `error ${code}: ${message}` : message || code, DETAIL_MAX_CHARS);
}

async function call(ports: PlatformApiPorts, service: Service, url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await ports.fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  } catch {
    throw new UpstreamError(`${service} could not be reached (${what}).`, 'CHANNEL_PLATFORM_UNREACHABLE');
  }
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = text === '' ? {} : JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the status decides.
  }
  // Slack answers 200 with `ok: false`; Telegram answers `ok: false` with an error status.
  if (!response.ok || body['ok'] === false) {
    const detail = serviceDetail(body);
    throw new UpstreamError(`${service} refused ${what} (HTTP ${response.status}${detail === '' ? '' : `, ${detail}`}).`, 'CHANNEL_PLATFORM_REFUSED');
  }
  return body;
}

const jsonInit = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify(body),
});

function twilioInit(config: Readonly<Record<string, string>>, form: Record<string, string>): RequestInit {
  const basic = Buffer.from(`${config['accountSid']}:${config['authToken']}`).toString('base64');
  return {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  };
}

const twilioAccount = (ports: PlatformApiPorts, config: Readonly<Record<string, string>>) =>
  `${trim(ports.config.CHANNEL_API_BASE_PHONE)}/2010-04-01/Accounts/${encodeURIComponent(config['accountSid']!)}`;

/** Sends an SMS from the channel's number; returns the platform's message id. */
export async function sendSms(ports: PlatformApiPorts, config: Readonly<Record<string, string>>, to: string, text: string): Promise<string> {
  const body = await call(
    ports,
    SERVICE_NAMES['phone-sms'],
    `${twilioAccount(ports, config)}/Messages.json`,
    twilioInit(config, { From: config['phoneNumber']!, To: to, Body: text }),
    'the SMS',
  );
  return typeof body['sid'] === 'string' ? body['sid'] : '';
}

/** Places a call from the channel's number whose answer fetches TwiML from `answerUrl`; returns the call id and status. */
export async function placeCall(ports: PlatformApiPorts, config: Readonly<Record<string, string>>, to: string, twiml: string) {
  const body = await call(
    ports,
    SERVICE_NAMES['phone-voice'],
    `${twilioAccount(ports, config)}/Calls.json`,
    twilioInit(config, { From: config['phoneNumber']!, To: to, Twiml: twiml }),
    'the call',
  );
  return { callId: typeof body['sid'] === 'string' ? body['sid'] : '', status: typeof body['status'] === 'string' ? body['status'] : 'queued' };
}

/** Sends the agent's reply where the message came from, through the platform's HTTP API. */
export async function sendReply(
  ports: PlatformApiPorts,
  platform: Platform,
  config: Readonly<Record<string, string>>,
  target: ReplyTarget,
  text: string,
): Promise<void> {
  const bases = ports.config;
  switch (platform) {
    case 'workspace-chat':
      await call(
        ports,
        SERVICE_NAMES[platform],
        `${trim(bases.CHANNEL_API_BASE_WORKSPACE_CHAT)}/chat.postMessage`,
        jsonInit(
          { channel: target['channel'], text, ...(target['threadTs'] !== undefined ? { thread_ts: target['threadTs'] } : {}) },
          { authorization: `Bearer ${config['botToken']}` },
        ),
        'the reply',
      );
      return;
    case 'community-chat':
      // The follow-up to the deferred answer: the interaction's webhook, authorised by its token.
      await call(
        ports,
        SERVICE_NAMES[platform],
        `${trim(bases.CHANNEL_API_BASE_COMMUNITY_CHAT)}/webhooks/${encodeURIComponent(target['applicationId'] ?? '')}/${encodeURIComponent(target['interactionToken'] ?? '')}`,
        jsonInit({ content: text.slice(0, 2000) }),
        'the follow-up',
      );
      return;
    case 'bot-messenger':
      await call(ports, SERVICE_NAMES[platform], `${telegramBot(ports, config)}/sendMessage`, jsonInit({ chat_id: target['chatId'], text }), 'the reply');
      return;
    case 'phone-messenger':
      await call(
        ports,
        SERVICE_NAMES[platform],
        `${trim(bases.CHANNEL_API_BASE_PHONE_MESSENGER)}/${encodeURIComponent(config['phoneNumberId']!)}/messages`,
        jsonInit({ messaging_product: 'whatsapp', to: target['to'], type: 'text', text: { body: text } }, { authorization: `Bearer ${config['accessToken']}` }),
        'the reply',
      );
      return;
    case 'phone-sms':
    case 'phone-unified':
    case 'phone-voice':
      await sendSms(ports, config, target['to'] ?? '', text);
      return;
    case 'webhook':
      return;
  }
}

const telegramBot = (ports: PlatformApiPorts, config: Readonly<Record<string, string>>) =>
  `${trim(ports.config.CHANNEL_API_BASE_BOT_MESSENGER)}/bot${config['botToken']}`;

/** Registers the channel's inbound URL with the bot platform, with the secret it will send back. */
export async function registerBotWebhook(ports: PlatformApiPorts, config: Readonly<Record<string, string>>, url: string): Promise<void> {
  await call(
    ports,
    SERVICE_NAMES['bot-messenger'],
    `${telegramBot(ports, config)}/setWebhook`,
    jsonInit({ url, secret_token: config['webhookSecret'], allowed_updates: ['message'] }),
    'setWebhook',
  );
}

export async function removeBotWebhook(ports: PlatformApiPorts, config: Readonly<Record<string, string>>): Promise<void> {
  await call(ports, SERVICE_NAMES['bot-messenger'], `${telegramBot(ports, config)}/deleteWebhook`, jsonInit({}), 'deleteWebhook');
}
