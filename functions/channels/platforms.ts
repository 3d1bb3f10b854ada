import { createHash, createHmac, createPublicKey, timingSafeEqual, verify as verifySignature } from 'node:crypto';
import type { Platform } from './channel.schema.ts';

/** What an inbound delivery brings, as the verifier and parser need it. */
export interface InboundRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /** The raw body: signatures are over these bytes, never a re-serialisation. */
  readonly body: Buffer;
  /**
   * The URL the platform called, query included (Twilio signs it). More than one only where the
   * query as sent is lost (API Gateway REST keeps decoded parameters): each way it may have been encoded.
   */
  readonly urls: readonly string[];
  /** Now, in epoch seconds (the replay window of platforms that sign a time). */
  readonly nowSec: number;
}

/** Where a reply goes, per platform (channel and thread, chat, interaction, phone numbers). */
export type ReplyTarget = Readonly<Record<string, string>>;

/** One message a person sent, once the platform's payload is read. */
export interface InboundMessage {
  /** The platform's id of the delivery, for telling a retry from a new message. */
  readonly messageId: string;
  readonly senderId: string;
  readonly text: string;
  /** The group (channel, guild, group chat) it was sent in; null for a direct message. */
  readonly groupId: string | null;
  /** Whether the bot was addressed (a mention, a slash command, a direct message). */
  readonly mentioned: boolean;
  /** Whose conversation it continues: the sender, or the thread it belongs to. */
  readonly conversationKey: string;
  readonly replyTo: ReplyTarget;
}

/** A response given at once, with no agent run (challenges, pings, events that are not messages). */
export interface ImmediateAnswer {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
}

export type Parsed =
  | { readonly kind: 'answer'; readonly answer: ImmediateAnswer }
  | { readonly kind: 'message'; readonly message: InboundMessage }
  | { readonly kind: 'sms'; readonly message: InboundMessage }
  | { readonly kind: 'call'; readonly callId: string; readonly from: string };

const json = (value: unknown, status = 200): ImmediateAnswer => ({ status, body: JSON.stringify(value), contentType: 'application/json' });
export const EMPTY_OK = json({ ok: true });
/** Twilio's "nothing to say": an empty TwiML response. */
export const EMPTY_TWIML: ImmediateAnswer = { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>', contentType: 'text/xml' };

function sameText(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const hmacHex = (algorithm: string, key: string, data: Buffer | string) => createHmac(algorithm, key).update(data).digest('hex');

/**
 * How far a signed time may be from now (Slack's own window): a request signed earlier is refused
 * however valid its signature, so a captured one cannot be replayed after the deliveries it could
 * repeat are remembered (`signedTimeHeader`).
 */
export const SIGNED_TIME_WINDOW_SEC = 300;

/** The header holding the time a platform signs with the body; null for platforms that sign none. */
export function signedTimeHeader(platform: Platform): string | null {
  if (platform === 'workspace-chat') return 'x-slack-request-timestamp';
  if (platform === 'community-chat') return 'x-signature-timestamp';
  return null;
}

/** Whether `timestamp` (epoch seconds, as the platform sent it) is within the window around now. */
function isFresh(timestamp: string, nowSec: number): boolean {
  return /^\d{1,12}$/.test(timestamp) && Math.abs(nowSec - Number(timestamp)) <= SIGNED_TIME_WINDOW_SEC;
}

/**
 * What a delivery is remembered by when the platform gave it no id: a digest of what the platform
 * signed (the body, and the signed time where there is one), so the same signed request sent again
 * is known for a replay while a new one, signed anew, is not.
 */
export function signedDigest(platform: Platform, request: Pick<InboundRequest, 'headers' | 'body'>): string {
  const header = signedTimeHeader(platform);
  const hash = createHash('sha256');
  if (header !== null) hash.update(`${request.headers[header] ?? ''}\n`);
  return `sha256:${hash.update(request.body).digest('hex')}`;
}

/** The Slack-kind signature: `v0=` hex HMAC-SHA256 over `v0:{timestamp}:{body}`, at most 5 minutes old. */
function verifyWorkspaceChat(request: InboundRequest, config: Readonly<Record<string, string>>): boolean {
  const timestamp = request.headers['x-slack-request-timestamp'] ?? '';
  if (!isFresh(timestamp, request.nowSec)) return false;
  const base = Buffer.concat([Buffer.from(`v0:${timestamp}:`, 'utf8'), request.body]);
  return sameText(request.headers['x-slack-signature'], `v0=${hmacHex('sha256', config['signingSecret']!, base)}`);
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo: the raw 32 bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The Discord-kind signature: Ed25519 over timestamp + body with the application's public key
 * (hex), the timestamp at most 5 minutes from now (Discord signs it; its libraries leave the check
 * to the receiver).
 */
function verifyCommunityChat(request: InboundRequest, config: Readonly<Record<string, string>>): boolean {
  const signature = request.headers['x-signature-ed25519'] ?? '';
  const timestamp = request.headers['x-signature-timestamp'] ?? '';
  if (!/^[0-9a-fA-F]{128}$/.test(signature) || !isFresh(timestamp, request.nowSec)) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(config['publicKey']!, 'hex')]), format: 'der', type: 'spki' });
    return verifySignature(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]), key, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

/** The Twilio-kind signature: base64 HMAC-SHA1 over the URL then each POST parameter, sorted, name then value. */
export function twilioSignature(authToken: string, url: string, params: Readonly<Record<string, string>>): string {
  const data =
    url +
    Object.keys(params)
      .sort()
      .map((name) => name + params[name])
      .join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

function formOf(body: Buffer): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(body.toString('utf8')));
}

/**
 * Whether the delivery carries a valid signature of the channel's platform, checked on the raw
 * body in constant time. The messenger's GET challenge is checked by `answerChallenge` instead.
 */
export function verifyInbound(platform: Platform, request: InboundRequest, config: Readonly<Record<string, string>>): boolean {
  switch (platform) {
    case 'workspace-chat':
      return verifyWorkspaceChat(request, config);
    case 'community-chat':
      return verifyCommunityChat(request, config);
    case 'bot-messenger':
      return sameText(request.headers['x-telegram-bot-api-secret-token'], config['webhookSecret']!);
    case 'phone-messenger':
      return sameText(request.headers['x-hub-signature-256'], `sha256=${hmacHex('sha256', config['appSecret']!, request.body)}`);
    case 'phone-voice':
    case 'phone-sms':
    case 'phone-unified':
      return request.urls.some((url) => sameText(request.headers['x-twilio-signature'], twilioSignature(config['authToken']!, url, formOf(request.body))));
    case 'webhook':
      // Without a secret the owner chose an open endpoint (SPEC part 2: the secret is optional).
      return config['secret'] === undefined || sameText(request.headers['x-signature-256'], `sha256=${hmacHex('sha256', config['secret'], request.body)}`);
  }
}

/** The messenger's subscription challenge (GET): the challenge echoed when the verify token matches. */
export function answerChallenge(query: Readonly<Record<string, string>>, config: Readonly<Record<string, string>>): ImmediateAnswer | null {
  if (query['hub.mode'] !== 'subscribe' || !sameText(query['hub.verify_token'], config['verifyToken']!)) return null;
  return { status: 200, body: query['hub.challenge'] ?? '', contentType: 'text/plain' };
}

type Json = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);
const obj = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});

function parseJson(body: Buffer): Json {
  try {
    return obj(JSON.parse(body.toString('utf8')));
  } catch {
    return {};
  }
}

/** Slack Events API: the URL challenge, then messages and mentions from `event_callback`; the bot's own posts are skipped. */
function parseWorkspaceChat(body: Json): Parsed {
  if (body['type'] === 'url_verification') return { kind: 'answer', answer: json({ challenge: str(body['challenge']) ?? '' }) };
  const event = obj(body['event']);
  const text = str(event['text']);
  const user = str(event['user']);
  const channel = str(event['channel']);
  if (body['type'] !== 'event_callback' || (event['type'] !== 'message' && event['type'] !== 'app_mention')) return { kind: 'answer', answer: EMPTY_OK };
  if (text === undefined || user === undefined || channel === undefined || event['bot_id'] !== undefined || event['subtype'] !== undefined)
    return { kind: 'answer', answer: EMPTY_OK };
  const thread = str(event['thread_ts']);
  const direct = event['channel_type'] === 'im';
  return {
    kind: 'message',
    message: {
      messageId: str(body['event_id']) ?? str(event['client_msg_id']) ?? `${channel}:${str(event['ts'])}`,
      senderId: user,
      text,
      groupId: direct ? null : channel,
      mentioned: direct || event['type'] === 'app_mention' || /<@[A-Z0-9]+>/.test(text),
      conversationKey: thread !== undefined ? `thread:${channel}:${thread}` : user,
      replyTo: { channel, ...(thread !== undefined ? { threadTs: thread } : {}) },
    },
  };
}

/** Discord interactions: PING, then application commands whose first option is the text. */
function parseCommunityChat(body: Json): Parsed {
  if (body['type'] === 1) return { kind: 'answer', answer: json({ type: 1 }) };
  if (body['type'] !== 2) return { kind: 'answer', answer: json({ type: 4, data: { content: 'Only commands are answered.' } }) };
  const data = obj(body['data']);
  const options = Array.isArray(data['options']) ? data['options'].map(obj) : [];
  const text = options.map((option) => str(option['value'])).find((value) => value !== undefined) ?? str(data['name']) ?? '';
  const user = obj(obj(body['member'])['user'] ?? body['user']);
  const senderId = str(user['id']) ?? 'unknown';
  const guild = str(body['guild_id']);
  return {
    kind: 'message',
    message: {
      messageId: str(body['id']) ?? '',
      senderId,
      text,
      groupId: guild ?? null,
      mentioned: true,
      conversationKey: senderId,
      replyTo: { applicationId: str(body['application_id']) ?? '', interactionToken: str(body['token']) ?? '' },
    },
  };
}

/** Telegram updates: text messages; a group message counts as addressed when it mentions someone or is a command. */
function parseBotMessenger(body: Json): Parsed {
  const message = obj(body['message']);
  const text = str(message['text']);
  const chat = obj(message['chat']);
  const chatId = str(chat['id']);
  const from = str(obj(message['from'])['id']);
  if (text === undefined || chatId === undefined || from === undefined) return { kind: 'answer', answer: EMPTY_OK };
  const direct = chat['type'] === 'private';
  return {
    kind: 'message',
    message: {
      messageId: str(body['update_id']) ?? `${chatId}:${str(message['message_id'])}`,
      senderId: from,
      text,
      groupId: direct ? null : chatId,
      mentioned: direct || /(^|\s)@\w+/.test(text) || text.startsWith('/'),
      conversationKey: direct ? from : `group:${chatId}:${from}`,
      replyTo: { chatId },
    },
  };
}

/** WhatsApp Cloud API: the first text message of the notification (one message per notification in practice). */
function parsePhoneMessenger(body: Json): Parsed {
  for (const entry of Array.isArray(body['entry']) ? body['entry'].map(obj) : []) {
    for (const change of Array.isArray(entry['changes']) ? entry['changes'].map(obj) : []) {
      const messages = obj(change['value'])['messages'];
      for (const message of Array.isArray(messages) ? messages.map(obj) : []) {
        const from = str(message['from']);
        const text = str(obj(message['text'])['body']);
        if (from === undefined || text === undefined) continue;
        return {
          kind: 'message',
          message: { messageId: str(message['id']) ?? '', senderId: from, text, groupId: null, mentioned: true, conversationKey: from, replyTo: { to: from } },
        };
      }
    }
  }
  return { kind: 'answer', answer: EMPTY_OK };
}

/** Twilio: a message (it has a Body) or a call; a unified number takes both, the others their own kind. */
function parsePhone(platform: Platform, form: Record<string, string>): Parsed {
  const from = form['From'] ?? '';
  const isMessage = form['Body'] !== undefined || form['MessageSid'] !== undefined;
  if (isMessage && platform !== 'phone-voice') {
    return {
      kind: 'sms',
      message: {
        messageId: form['MessageSid'] ?? form['SmsSid'] ?? '',
        senderId: from,
        text: form['Body'] ?? '',
        groupId: null,
        mentioned: true,
        conversationKey: from,
        replyTo: { to: from, from: form['To'] ?? '' },
      },
    };
  }
  if (!isMessage && platform !== 'phone-sms') return { kind: 'call', callId: form['CallSid'] ?? '', from };
  return { kind: 'answer', answer: EMPTY_TWIML };
}

/** Reads a verified delivery: a message for the agent, a call, or something answered at once. */
export function parseInbound(platform: Platform, body: Buffer): Parsed {
  switch (platform) {
    case 'workspace-chat':
      return parseWorkspaceChat(parseJson(body));
    case 'community-chat':
      return parseCommunityChat(parseJson(body));
    case 'bot-messenger':
      return parseBotMessenger(parseJson(body));
    case 'phone-messenger':
      return parsePhoneMessenger(parseJson(body));
    case 'phone-voice':
    case 'phone-sms':
    case 'phone-unified':
      return parsePhone(platform, formOf(body));
    case 'webhook': {
      const payload = parseJson(body);
      const senderId = str(payload['senderId']) ?? str(payload['sender']) ?? 'webhook';
      const text = str(payload['message']) ?? str(payload['text']) ?? '';
      return {
        kind: 'message',
        message: {
          messageId: str(payload['messageId']) ?? '',
          senderId,
          text,
          groupId: str(payload['groupId']) ?? null,
          mentioned: payload['mentioned'] !== false,
          conversationKey: str(payload['threadId']) !== undefined ? `thread:${str(payload['threadId'])}` : senderId,
          replyTo: {},
        },
      };
    }
  }
}

/** The answer that acknowledges a message whose reply comes later, within the platform's deadline. */
export function acknowledgement(platform: Platform): ImmediateAnswer {
  if (platform === 'community-chat') return json({ type: 5 });
  if (platform === 'phone-voice' || platform === 'phone-sms' || platform === 'phone-unified') return EMPTY_TWIML;
  return EMPTY_OK;
}

const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A TwiML message answered in the webhook's response. */
export function twimlMessage(text: string): ImmediateAnswer {
  return { status: 200, body: `<?xml version="1.0" encoding="UTF-8"?><Response><Message>${xml(text)}</Message></Response>`, contentType: 'text/xml' };
}

/** TwiML that tells the caller `text` and hangs up: a call the channel does not take. */
export function twimlSayAndHangUp(text: string): ImmediateAnswer {
  return { status: 200, body: `<?xml version="1.0" encoding="UTF-8"?><Response><Say>${xml(text)}</Say><Hangup/></Response>`, contentType: 'text/xml' };
}

/** TwiML connecting a call to the voice bridge's Twilio stream, with custom parameters the bridge reads on `start`. */
export function twimlStream(streamUrl: string, parameters: Readonly<Record<string, string>>): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${xml(name)}" value="${xml(value)}"/>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${xml(streamUrl)}">${params}</Stream></Connect></Response>`;
}
