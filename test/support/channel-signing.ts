/**
 * Inbound requests as each outside service makes them: shaped as its documentation shows and signed
 * with its own library or documented scheme, never with the platform's code
 * (functions/channels/platforms.ts), so a test cannot pass by agreeing with itself. Where the
 * service publishes a verifier (Slack's `@slack/bolt`, Discord's `discord-interactions`), every
 * request is checked with it before it is sent: what reaches the platform is what the service's
 * own code accepts.
 *
 * Also what Twilio Media Streams send a server, and the schema of what a server may send back.
 */
import { createHash, createHmac } from 'node:crypto';
import { verifySlackRequest } from '@slack/bolt';
import { verifyKey } from 'discord-interactions';
import nacl from 'tweetnacl';
import twilio from 'twilio';
import { z } from 'zod';

/** A request body as sent, and the headers that go with it (for `platform.api`'s `rawBody` and `headers`). */
export interface SignedRequest {
  readonly rawBody: string;
  readonly headers: Record<string, string>;
}

const nowSec = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------------------------------------
// Slack: https://api.slack.com/authentication/verifying-requests-from-slack

/**
 * A Slack Events API request: `X-Slack-Signature` is `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}`
 * with the app's signing secret. Checked with `@slack/bolt`'s verifier at the time it was signed, so a
 * request signed long ago still carries a signature Slack's code accepts.
 */
export function slackRequest(signingSecret: string, payload: unknown, options: { timestampSec?: number } = {}): SignedRequest {
  const body = JSON.stringify(payload);
  const timestamp = options.timestampSec ?? nowSec();
  const signature = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  verifySlackRequest({
    signingSecret,
    body,
    headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
    nowMilliseconds: timestamp * 1000,
  });
  return {
    rawBody: body,
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature },
  };
}

/** Slack's `url_verification` request, sent when an app's Request URL is saved. */
export const slackUrlVerification = (challenge: string) => ({ token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl', challenge, type: 'url_verification' });

/** Slack's `event_callback` envelope around one event, as the Events API delivers it. */
export function slackEventCallback(eventId: string, event: Record<string, unknown>) {
  return {
    token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
    team_id: 'T0001TEAM',
    api_app_id: 'A0001APP',
    event: { event_ts: event['ts'], ...event },
    type: 'event_callback',
    event_id: eventId,
    event_time: nowSec(),
    authorizations: [{ enterprise_id: null, team_id: 'T0001TEAM', user_id: 'U0001BOT', is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Discord: https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint

/** A Discord application: its Ed25519 key pair (tweetnacl) and requests signed as Discord signs them. */
export interface DiscordApplication {
  /** The application's public key, hex, as the developer portal shows it. */
  readonly publicKey: string;
  /**
   * An interaction request: `X-Signature-Ed25519` over timestamp + body, `X-Signature-Timestamp`.
   * Checked with `discord-interactions`' `verifyKey` before it is returned.
   */
  request(payload: unknown, options?: { timestampSec?: number | string }): Promise<SignedRequest>;
}

export function discordApplication(): DiscordApplication {
  const keys = nacl.sign.keyPair();
  const publicKey = Buffer.from(keys.publicKey).toString('hex');
  return {
    publicKey,
    async request(payload, options = {}) {
      const body = JSON.stringify(payload);
      const timestamp = String(options.timestampSec ?? nowSec());
      const signature = Buffer.from(nacl.sign.detached(Buffer.from(timestamp + body, 'utf8'), keys.secretKey)).toString('hex');
      if (!(await verifyKey(body, signature, timestamp, publicKey))) throw new Error('discord-interactions refused a request signed with tweetnacl');
      return { rawBody: body, headers: { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp } };
    },
  };
}

/** Discord's PING, sent when the Interactions Endpoint URL is saved. */
export const discordPing = (applicationId: string) => ({
  application_id: applicationId,
  entitlements: [],
  id: snowflake(`${applicationId}:ping`),
  token: 'aW50ZXJhY3Rpb246cGluZw',
  type: 1,
  version: 1,
});

/**
 * A slash command used in a DM with the bot (Discord's APPLICATION_COMMAND interaction), its first
 * string option holding `text`. `id: null` leaves the id out (not something Discord sends: for
 * tests of a signed delivery without one).
 */
export function discordSlashCommand(input: { id: string | null; applicationId: string; token: string; userId: string; text: string }) {
  return {
    app_permissions: '562949953601536',
    application_id: input.applicationId,
    authorizing_integration_owners: { '1': input.userId },
    channel: { id: snowflake(`${input.userId}:dm`), type: 1, flags: 0, recipients: [{ id: input.userId, username: 'caller' }] },
    channel_id: snowflake(`${input.userId}:dm`),
    context: 1,
    data: { id: snowflake('command:ask'), name: 'ask', options: [{ name: 'q', type: 3, value: input.text }], type: 1 },
    entitlements: [],
    ...(input.id !== null ? { id: input.id } : {}),
    locale: 'en-US',
    token: input.token,
    type: 2,
    user: { avatar: null, discriminator: '0', global_name: 'Caller', id: input.userId, public_flags: 0, username: 'caller' },
    version: 1,
  };
}

/** A Discord-shaped id (a decimal snowflake) derived from `seed`. */
export function snowflake(seed: string): string {
  return BigInt(`0x${digest(seed).slice(0, 15)}`).toString();
}

// ---------------------------------------------------------------------------------------------
// Meta (WhatsApp Cloud API): https://developers.facebook.com/docs/graph-api/webhooks/getting-started

/**
 * A webhook notification from Meta: `X-Hub-Signature-256` is `sha256=` + hex HMAC-SHA256 of the
 * payload with the app secret. Meta sends (and signs) the JSON with non-ASCII characters escaped
 * as `\uXXXX` in lowercase hex, so the body here is written that way too.
 */
export function metaRequest(appSecret: string, payload: unknown): SignedRequest {
  const body = JSON.stringify(payload).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const signature = `sha256=${createHmac('sha256', appSecret).update(body, 'utf8').digest('hex')}`;
  return { rawBody: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature } };
}

/** The Cloud API's notification of one text message received by a business number. */
export function whatsappTextNotification(input: { phoneNumberId: string; from: string; name: string; messageId: string; text: string }) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: input.phoneNumberId },
              contacts: [{ profile: { name: input.name }, wa_id: input.from }],
              messages: [{ from: input.from, id: input.messageId, timestamp: String(nowSec()), text: { body: input.text }, type: 'text' }],
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Telegram: https://core.telegram.org/bots/api#setwebhook, https://core.telegram.org/bots/api#update

/** Telegram's delivery of an Update: the `secret_token` given to setWebhook comes back in a header. */
export function telegramRequest(secretToken: string, update: unknown): SignedRequest {
  return { rawBody: JSON.stringify(update), headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secretToken } };
}

/** What Telegram accepts as setWebhook's `secret_token`: 1-256 of A-Z, a-z, 0-9, `_` and `-`. */
export const TELEGRAM_SECRET_TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

/** An Update with a text message from a user in a private chat with the bot. */
export function telegramTextUpdate(input: { updateId: number; messageId: number; userId: number; text: string }) {
  const user = { id: input.userId, first_name: 'Ada', username: 'ada_l' };
  return {
    update_id: input.updateId,
    message: {
      message_id: input.messageId,
      from: { ...user, is_bot: false, language_code: 'en' },
      chat: { ...user, type: 'private' },
      date: nowSec(),
      text: input.text,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Twilio: https://www.twilio.com/docs/usage/webhooks/webhooks-security

/**
 * A Twilio webhook: the form-encoded parameters, `X-Twilio-Signature` from the `twilio` package's
 * own `getExpectedTwilioSignature` over the URL Twilio was given and the parameters.
 */
export function twilioRequest(authToken: string, url: string, params: Readonly<Record<string, string>>): SignedRequest {
  return {
    rawBody: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, url, { ...params }),
    },
  };
}

/** A Twilio-shaped SID: the two-letter prefix and 32 hex digits, derived from `seed`. */
export function twilioSid(prefix: 'AC' | 'CA' | 'MZ' | 'SM', seed: string): string {
  return prefix + digest(`${prefix}:${seed}`).slice(0, 32);
}

/**
 * The parameters of Twilio's incoming-message webhook (https://www.twilio.com/docs/messaging/guides/webhook-request).
 * `messageSid: null` leaves out the message's SIDs (Twilio always sends them: for tests of a
 * delivery without one).
 */
export function twilioSmsParams(input: { accountSid: string; messageSid: string | null; from: string; to: string; body: string }): Record<string, string> {
  return {
    ToCountry: 'US',
    ToState: 'CA',
    ...(input.messageSid !== null ? { SmsMessageSid: input.messageSid, SmsSid: input.messageSid, MessageSid: input.messageSid } : {}),
    NumMedia: '0',
    ToCity: 'SAN FRANCISCO',
    FromZip: '94105',
    FromState: 'CA',
    SmsStatus: 'received',
    FromCity: 'SAN FRANCISCO',
    Body: input.body,
    FromCountry: 'US',
    To: input.to,
    ToZip: '94105',
    NumSegments: '1',
    AccountSid: input.accountSid,
    From: input.from,
    ApiVersion: '2010-04-01',
  };
}

/** The parameters of Twilio's incoming-call webhook (https://www.twilio.com/docs/usage/webhooks/voice-webhooks). */
export function twilioVoiceParams(input: { accountSid: string; callSid: string; from: string; to: string }): Record<string, string> {
  return {
    AccountSid: input.accountSid,
    ApiVersion: '2010-04-01',
    CallSid: input.callSid,
    CallStatus: 'ringing',
    Called: input.to,
    CalledCountry: 'US',
    CalledState: 'CA',
    Caller: input.from,
    CallerCountry: 'US',
    CallerState: 'CA',
    Direction: 'inbound',
    From: input.from,
    FromCountry: 'US',
    FromState: 'CA',
    To: input.to,
    ToCountry: 'US',
    ToState: 'CA',
  };
}

// ---------------------------------------------------------------------------------------------
// Twilio Media Streams: https://www.twilio.com/docs/voice/media-streams/websocket-messages

/**
 * The messages Twilio sends a server over one Media Stream, numbered as Twilio numbers them:
 * `connected`, then `start` (with the TwiML's `<Parameter>`s), `media` (20 ms of μ-law each),
 * `mark` (the echo of a server's mark once the audio before it has played) and `stop`.
 */
export function twilioMediaStream(input: { seed: string; accountSid?: string }) {
  const accountSid = input.accountSid ?? twilioSid('AC', input.seed);
  const callSid = twilioSid('CA', input.seed);
  const streamSid = twilioSid('MZ', input.seed);
  let sequence = 0;
  let chunk = 0;
  const next = () => String(++sequence);
  return {
    streamSid,
    callSid,
    connected: () => ({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
    start: (customParameters: Readonly<Record<string, string>>) => ({
      event: 'start',
      sequenceNumber: next(),
      start: {
        accountSid,
        streamSid,
        callSid,
        tracks: ['inbound'],
        customParameters,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
      streamSid,
    }),
    media: (mulaw: Buffer) => {
      chunk++;
      return {
        event: 'media',
        sequenceNumber: next(),
        media: { track: 'inbound', chunk: String(chunk), timestamp: String((chunk - 1) * 20), payload: mulaw.toString('base64') },
        streamSid,
      };
    },
    mark: (name: string) => ({ event: 'mark', sequenceNumber: next(), streamSid, mark: { name } }),
    stop: () => ({ event: 'stop', sequenceNumber: next(), stop: { accountSid, callSid }, streamSid }),
  };
}

const streamSid = z.string().min(1);
/**
 * Every message a server may send Twilio on a Media Stream ("Send WebSocket messages to Twilio"):
 * `media`, `mark` and `clear`, each with exactly the fields documented, nothing else.
 */
export const TwilioServerMessage = z.discriminatedUnion('event', [
  z.strictObject({ event: z.literal('media'), streamSid, media: z.strictObject({ payload: z.base64() }) }),
  z.strictObject({ event: z.literal('mark'), streamSid, mark: z.strictObject({ name: z.string() }) }),
  z.strictObject({ event: z.literal('clear'), streamSid }),
]);

/** The frames a server sent that Twilio's schema does not have (an empty list when all are Twilio's). */
export function outsideTwilioSchema(frames: readonly unknown[]): unknown[] {
  return frames.filter((frame) => !TwilioServerMessage.safeParse(frame).success);
}

function digest(seed: string): string {
  return createHash('sha256').update(seed).digest('hex');
}
