import { AuthenticationRequiredError, MethodNotAllowedError, NotFoundError } from '../core/errors.ts';
import { childLineageHeader } from '../core/http/lineage.ts';
import type { HttpRequest } from '../core/http/request.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { Ports } from '../ports.ts';
import { chatOnChannel } from './channel-chat.ts';
import { failureOf, noteChannelFailure, noteFailureBeside } from './channel-failure.ts';
import { PLATFORMS, type ChannelRecord, type Platform } from './channel.schema.ts';
import { openConfig } from './channel.service.ts';
import {
  acknowledgement,
  answerChallenge,
  EMPTY_TWIML,
  parseInbound,
  signedDigest,
  signedTimeHeader,
  twimlMessage,
  twimlSayAndHangUp,
  verifyInbound,
  type ImmediateAnswer,
  type InboundMessage,
  type InboundRequest,
} from './platforms.ts';
import { voiceCallTwiml, whyNoCalls } from './voice-call.ts';

/** Inbound messages one sender may send to one channel per minute before 429. */
export const INBOUND_PER_SENDER = { limit: 30, windowSec: 60 } as const;

/** The queue entry point that runs the agent and sends the reply after the delivery is acknowledged. */
export const REPLY_QUEUE = 'deliver-reply';

/** What the reply task carries: the message and where it came from. */
export interface ReplyTask {
  readonly channelId: string;
  readonly message: InboundMessage;
  readonly lineage: string;
  readonly baseUrl: string;
}

/**
 * How long a delivery is remembered, so that sending it again runs nothing. Where the platform
 * signs a time, a replay older than its window is refused anyway, and a day covers its retries;
 * where it signs none (Twilio, the messenger, Telegram, webhooks), nothing but this memory tells a
 * replay from a new delivery, so it is kept a month.
 */
const DELIVERY_MEMORY_SEC = { signedTime: 24 * 3600, unsignedTime: 30 * 24 * 3600 } as const;

const ignored = (reason: string, status = 200): ImmediateAnswer => ({
  status,
  body: JSON.stringify({ ignored: true, reason }),
  contentType: 'application/json',
});

const SMS_STOP = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const SMS_START = new Set(['START', 'YES', 'UNSTOP']);

/** The channel, verified to be of `platform`; the same 404 for a missing one, so ids reveal nothing. */
async function channelFor(channelId: string, platform: string, ports: Ports): Promise<ChannelRecord> {
  const channel = /^ch-[0-9A-Za-z]{21}$/.test(channelId) ? await ports.channels.get(channelId) : null;
  const matches = channel !== null && (channel.platform === platform || (platform === 'whatsapp' && channel.platform === 'phone-messenger'));
  if (!matches || !(PLATFORMS as readonly string[]).includes(channel.platform)) throw new NotFoundError(`Channel ${channelId} not found.`, 'CHANNEL_NOT_FOUND');
  return channel;
}

/**
 * A request on a channel's inbound URL, as the platform makes it: a GET is the messenger's
 * verification (`answerMessengerChallenge`), anything else a delivery (`receiveInbound`).
 */
export function answerInbound(scope: RequestScope, channelId: string, platform: string, request: HttpRequest, ports: Ports): Promise<ImmediateAnswer> {
  return request.method === 'GET' || request.method === 'HEAD'
    ? answerMessengerChallenge(channelId, platform, request, ports)
    : receiveInbound(scope, channelId, platform, request, ports);
}

/**
 * GET on an inbound URL: the messenger's subscription challenge, answered only with the channel's
 * verify token. Meta sends it to the one Callback URL that also takes the deliveries (POST), so it
 * is answered on the `webhookUrl` (`.../phone-messenger`) and on the SPEC's `.../whatsapp` alike;
 * every other platform only POSTs, and a GET is told so (405).
 */
export async function answerMessengerChallenge(channelId: string, platform: string, request: HttpRequest, ports: Ports): Promise<ImmediateAnswer> {
  const channel = await channelFor(channelId, platform, ports);
  if (channel.platform !== 'phone-messenger') throw new MethodNotAllowedError('GET', ['POST']);
  const answer = answerChallenge(request.query, await openConfig(channel, ports));
  if (answer === null) throw new AuthenticationRequiredError('The verify token does not match.', 'INVALID_SIGNATURE');
  return answer;
}

/**
 * One delivery from a platform. The signature is checked first, on the raw body: without a valid
 * one nothing else happens (401). Then: a paused channel ignores it (200), a muted sender is
 * accepted and not answered (202), the sender, group and mention rules decide whether the agent
 * answers, a repeat of a delivery already taken is acknowledged only (a call already answered gets
 * no second voice token), and each sender is limited per minute (429). The agent runs after the acknowledgement, from a task, so a slow agent never
 * makes the platform time out; a `webhook` channel's caller gets the reply in the response instead.
 */
export async function receiveInbound(scope: RequestScope, channelId: string, platform: string, request: HttpRequest, ports: Ports): Promise<ImmediateAnswer> {
  const channel = await channelFor(channelId, platform, ports);
  const config = await openConfig(channel, ports);
  const inbound = {
    method: request.method,
    headers: request.headers,
    query: request.query,
    body: request.body ?? Buffer.alloc(0),
    urls: receivedUrls(`${scope.urls.baseUrl}${request.path}`, request),
    nowSec: Math.floor(ports.clock.now() / 1000),
  };
  if (!verifyInbound(channel.platform, inbound, config))
    throw new AuthenticationRequiredError('The request signature is missing or invalid.', 'INVALID_SIGNATURE');

  const parsed = parseInbound(channel.platform, inbound.body);
  if (parsed.kind === 'answer') return parsed.answer;
  if (channel.status === 'paused') return channel.platform === 'community-chat' ? ignoredCommand() : phoneOr(channel.platform, ignored('paused'));
  if (parsed.kind === 'call') {
    // Each call is answered once: a call webhook sent again (Twilio signs no time) gets no second
    // voice token, and so opens no second session billed to the owner.
    if (!(await claimOnce(channel, `call:${parsed.callId !== '' ? parsed.callId : signedDigest(channel.platform, inbound)}`, ports))) return EMPTY_TWIML;
    const refusal = await whyNoCalls(channel, ports);
    if (refusal !== null) return refuseCall(channel, refusal, parsed.callId, scope, ports);
    return { status: 200, body: await voiceCallTwiml(channel, scope.urls, ports), contentType: 'text/xml' };
  }

  const message = parsed.message;
  // Before anything is read for the sender: a flood costs one counter update per delivery.
  await ports.rateLimiter.consume(`channel-inbound:${channel.channelId}:${message.senderId}`, INBOUND_PER_SENDER);
  const sender = await ports.channels.getSender(channel.channelId, message.senderId);
  if (sender?.muted === true) return phoneOr(channel.platform, ignored('muted', 202), 202);
  if (parsed.kind === 'sms') {
    const keyword = message.text.trim().toUpperCase();
    if (SMS_STOP.has(keyword)) {
      await ports.channels.updateSender(channel.channelId, message.senderId, { stopped: true });
      return twimlMessage('You are unsubscribed and will receive no more messages. Reply START to resubscribe.');
    }
    if (SMS_START.has(keyword)) {
      await ports.channels.updateSender(channel.channelId, message.senderId, { stopped: false });
      return twimlMessage('You are subscribed again. Reply STOP to unsubscribe, HELP for help.');
    }
    if (keyword === 'HELP' || keyword === 'INFO') return twimlMessage(`${channel.name}: an automated assistant. Reply STOP to unsubscribe.`);
    if (sender?.stopped === true) return EMPTY_TWIML;
  }
  const refusal = admission(channel, message);
  if (refusal !== null) return phoneOr(channel.platform, channel.platform === 'community-chat' ? ignoredCommand() : ignored(refusal));
  const deliveryId = deliveryIdOf(channel, config, message, inbound);
  if (deliveryId !== null && !(await claimOnce(channel, deliveryId, ports)))
    return channel.platform === 'webhook' ? ignored('duplicate') : acknowledgement(channel.platform);

  if (channel.platform === 'webhook') {
    const startedAt = ports.clock.now();
    try {
      const { reply, conversationId } = await chatOnChannel(channel, message.conversationKey, message.text, scope, ports);
      return { status: 200, body: JSON.stringify({ reply, conversationId }), contentType: 'application/json' };
    } catch (error) {
      // The caller gets the error in its response; the owner sees it too. Not counted: nothing runs unseen.
      const note = { kind: 'CHANNEL_AGENT_RUN', failure: failureOf(error, 'The agent run failed'), lineage: scope.lineage, startedAt, counted: false } as const;
      await noteFailureBeside(channel, { ...note, request: { messageId: message.messageId, senderId: message.senderId } }, ports, scope.log);
      throw error;
    }
  }
  const task: ReplyTask = { channelId: channel.channelId, message, lineage: childLineageHeader(scope.lineage), baseUrl: scope.urls.baseUrl };
  await ports.tasks.send(REPLY_QUEUE, task);
  return acknowledgement(channel.platform);
}

/**
 * The URLs the platform may have signed: the query exactly as received where the wiring keeps it
 * (locally, function URLs). API Gateway REST (v1) passes on only decoded parameters, so there the
 * two common ways to write them are tried: RFC 3986 (`%20`, `~` kept, as `encodeURIComponent`
 * writes) and the WHATWG form encoding (`+`, `%7E`, as `URLSearchParams` writes). A URL mixing the
 * two is refused there, as nothing can tell how it was written.
 */
export function receivedUrls(pageUrl: string, request: Pick<HttpRequest, 'query' | 'rawQuery'>): string[] {
  if (request.rawQuery !== undefined) return [request.rawQuery === '' ? pageUrl : `${pageUrl}?${request.rawQuery}`];
  const entries = Object.entries(request.query);
  if (entries.length === 0) return [pageUrl];
  const rfc3986 = entries.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  const form = new URLSearchParams(entries).toString();
  return [...new Set([`${pageUrl}?${rfc3986}`, `${pageUrl}?${form}`])];
}

/**
 * A call the channel's agent cannot take: the caller hears why and the call ends, with no voice
 * token. A unified number on a text agent takes messages only, as its owner chose; any other case
 * (a voice number whose agent became a text one or was deleted) is a failure the owner is shown.
 */
async function refuseCall(
  channel: ChannelRecord,
  refusal: NonNullable<Awaited<ReturnType<typeof whyNoCalls>>>,
  callId: string,
  scope: RequestScope,
  ports: Ports,
): Promise<ImmediateAnswer> {
  if (channel.platform === 'phone-unified' && refusal.kind === 'text-agent') return twimlSayAndHangUp('This number takes text messages only.');
  const failure = { code: 'CHANNEL_CALL_REFUSED', message: `A call was not answered: ${refusal.message}.` };
  await noteChannelFailure(
    channel,
    { kind: 'CHANNEL_CALL', failure, lineage: scope.lineage, startedAt: ports.clock.now(), request: { callId }, counted: false },
    ports,
    scope.log,
  );
  return twimlSayAndHangUp('This number cannot take calls at the moment.');
}

/**
 * What a message is remembered by: the platform's id of it (Slack's `event_id`, Telegram's
 * `update_id`, Discord's interaction id, the messenger's message id, Twilio's `MessageSid`, a
 * webhook's `messageId`), else the digest of what was signed. An open webhook (no secret) without a
 * `messageId` is not remembered: anyone may send it anything, and the same text twice is two messages.
 */
function deliveryIdOf(channel: ChannelRecord, config: Readonly<Record<string, string>>, message: InboundMessage, inbound: InboundRequest): string | null {
  if (message.messageId !== '') return message.messageId;
  if (channel.platform === 'webhook' && config['secret'] === undefined) return null;
  return signedDigest(channel.platform, inbound);
}

/** True the first time `deliveryId` comes to the channel within its memory; false for a repeat. */
function claimOnce(channel: ChannelRecord, deliveryId: string, ports: Ports): Promise<boolean> {
  const ttlSec = signedTimeHeader(channel.platform) === null ? DELIVERY_MEMORY_SEC.unsignedTime : DELIVERY_MEMORY_SEC.signedTime;
  return ports.channels.claimDelivery(channel.channelId, deliveryId, ports.clock.now(), ttlSec);
}

/** A phone platform reads TwiML: anything it gets is an empty response with the given status. */
function phoneOr(platform: Platform, answer: ImmediateAnswer, status = 200): ImmediateAnswer {
  return platform === 'phone-voice' || platform === 'phone-sms' || platform === 'phone-unified' ? { ...EMPTY_TWIML, status } : answer;
}

/** A command the agent will not answer still needs an interaction response, or the user sees a failure. */
function ignoredCommand(): ImmediateAnswer {
  return { status: 200, body: JSON.stringify({ type: 4, data: { content: 'This bot is not answering here.', flags: 64 } }), contentType: 'application/json' };
}

/** Why the agent must not answer this message (null: it answers): senders, groups and mentions (SPEC part 2). */
export function admission(channel: ChannelRecord, message: InboundMessage): string | null {
  if (channel.allowedSenders.length > 0 && !channel.allowedSenders.includes(message.senderId)) return 'sender not allowed';
  if (message.groupId !== null) {
    if (channel.groupPolicy === 'disabled') return 'groups disabled';
    if (channel.groupPolicy === 'allowlist' && !channel.allowedGroups.includes(message.groupId)) return 'group not allowed';
    if (channel.requireMention && !message.mentioned) return 'not mentioned';
  }
  return null;
}
