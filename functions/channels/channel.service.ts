import { randomBytes } from 'node:crypto';
import type { AgentRecord } from '../agents/agent.schema.ts';
import { chattableAgent } from '../agents/chattable-agent.ts';
import { requireAlias, type UserActor } from '../core/auth/actor.ts';
import { AccessDeniedError, ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import { sortableId } from '../core/ids.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { SecretContext } from '../core/secret-box.ts';
import { registerSecret } from '../core/secret-scope.ts';
import type { Ports } from '../ports.ts';
import { chatOnChannel } from './channel-chat.ts';
import { failureOf, noteFailureBeside } from './channel-failure.ts';
import {
  PLATFORM_CONFIG,
  presentChannel,
  secretValues,
  shownConfig,
  webhookUrlOf,
  type ChannelRecord,
  type GroupPolicy,
  type Platform,
} from './channel.schema.ts';
import { placeCall, registerBotWebhook, removeBotWebhook, sendSms } from './platform-api.ts';
import { voiceCallTwiml, whyNoCalls } from './voice-call.ts';

/** Binds a channel's sealed config to the channel and its owner: copied elsewhere, it does not open. */
const sealContext = (channel: Pick<ChannelRecord, 'channelId' | 'ownerId'>): SecretContext => ({ channelId: channel.channelId, ownerId: channel.ownerId });

/**
 * The channel's platformConfig in clear, for verifying and calling the platform; never returned to
 * callers. Its secrets join the request's scrubbing (secret-scope.ts), so no log line, usage record
 * or `lastError` written in this request shows one, even quoted back by the service.
 */
export async function openConfig(channel: ChannelRecord, ports: Pick<Ports, 'secretBox'>): Promise<Record<string, string>> {
  const config = JSON.parse(await ports.secretBox.open(channel.sealedConfig, sealContext(channel))) as Record<string, string>;
  registerConfigSecrets(config);
  return config;
}

function registerConfigSecrets(config: Readonly<Record<string, string>>): void {
  for (const value of secretValues(config)) registerSecret(value);
}

async function sealed(channel: Pick<ChannelRecord, 'channelId' | 'ownerId'>, config: Record<string, string>, ports: Pick<Ports, 'secretBox'>) {
  return { sealedConfig: await ports.secretBox.seal(JSON.stringify(config), sealContext(channel)), configShown: shownConfig(config) };
}

/** SPEC part 5.9: another user's channel is a 403; a missing one a 404. */
export async function ownedChannel(actor: UserActor, channelId: string, ports: Pick<Ports, 'channels'>): Promise<ChannelRecord> {
  const channel = await ports.channels.get(channelId);
  if (channel === null) throw new NotFoundError(`Channel ${channelId} not found.`, 'CHANNEL_NOT_FOUND');
  if (channel.ownerId !== actor.userId) throw new AccessDeniedError(`Channel ${channelId} belongs to another user.`);
  return channel;
}

/** A 400 naming each missing or invalid field of the platform's config. */
function checkConfig(platform: Platform, config: unknown): Record<string, string> {
  const parsed = PLATFORM_CONFIG[platform].safeParse(config);
  if (parsed.success) return parsed.data as Record<string, string>;
  const issues = parsed.error.issues.map((issue) => `platformConfig.${issue.path.join('.')}: ${issue.message}`);
  throw new ValidationError('Invalid platformConfig', issues);
}

/** A phone-voice channel carries calls only, and only a voice agent speaks on a call. */
function checkAgentFits(platform: Platform, agent: Pick<AgentRecord, 'agentId' | 'agentType'>): void {
  if (platform === 'phone-voice' && agent.agentType !== 'bidi') {
    const message = `agentId: a phone-voice channel takes calls, which need a voice agent (agentType "bidi"); agent ${agent.agentId} is a text agent (phone-sms or phone-unified take text messages)`;
    throw new ValidationError('Invalid request', [message]);
  }
}

/**
 * Registers the channel's inbound URL with the bot service; a refusal is the caller's answer (502,
 * naming the service) and is also kept as the channel's `lastError` (when `stored`) and in the owner's logs.
 */
async function registerWebhook(scope: RequestScope, channel: ChannelRecord, config: Record<string, string>, ports: Ports, stored: boolean): Promise<void> {
  const startedAt = ports.clock.now();
  try {
    await registerBotWebhook(ports, config, webhookUrlOf(scope.urls.baseUrl, channel));
  } catch (error) {
    const note = { kind: 'CHANNEL_WEBHOOK_REGISTRATION', failure: failureOf(error), lineage: scope.lineage, startedAt, request: {}, counted: false } as const;
    await noteFailureBeside(channel, note, ports, scope.log, stored);
    throw error;
  }
}

export interface CreateChannelInput {
  readonly name: string;
  readonly platform: Platform;
  readonly agentId: string;
  readonly platformConfig: Record<string, unknown>;
  readonly allowedSenders: string[];
  readonly groupPolicy: GroupPolicy;
  readonly allowedGroups: string[];
  readonly requireMention: boolean;
  readonly initialPrompt?: string | undefined;
}

/**
 * Creates a channel; a bot-messenger channel also registers its webhook with the platform, with a
 * secret generated here that the platform sends back on every delivery (no webhook, no channel).
 */
export async function createChannel(scope: RequestScope, input: CreateChannelInput, ports: Ports) {
  const owner = requireAlias(scope.actor);
  const now = ports.clock.now();
  checkAgentFits(input.platform, await chattableAgent(owner.userId, input.agentId, ports));
  const ids = { channelId: sortableId('ch-', now), ownerId: owner.userId };
  const checked = checkConfig(input.platform, input.platformConfig);
  const config = input.platform === 'bot-messenger' ? { ...checked, webhookSecret: randomBytes(24).toString('base64url') } : checked;
  registerConfigSecrets(config);
  const channel: ChannelRecord = {
    ...ids,
    name: input.name,
    platform: input.platform,
    agentId: input.agentId,
    status: 'active',
    ...(await sealed(ids, config, ports)),
    allowedSenders: input.allowedSenders,
    groupPolicy: input.groupPolicy,
    allowedGroups: input.allowedGroups,
    requireMention: input.requireMention,
    initialPrompt: input.initialPrompt ?? null,
    failureCount: 0,
    createdAt: now,
    updatedAt: now,
  };
  // Not stored yet, so no lastError to keep: the owner reads the failure in the answer and the logs.
  if (input.platform === 'bot-messenger') await registerWebhook(scope, channel, config, ports, false);
  if (!(await ports.channels.create(channel))) throw new ConflictError('A channel with this id is being created; try again.');
  const shown = presentChannel(channel, scope.urls.baseUrl);
  return {
    channelId: shown.channelId,
    name: shown.name,
    platform: shown.platform,
    agentId: shown.agentId,
    status: shown.status,
    webhookUrl: shown.webhookUrl,
    createdAt: shown.createdAt,
  };
}

export async function listChannels(scope: RequestScope, actor: UserActor, query: { limit: number; cursor?: string | undefined }, ports: Ports) {
  const page = await ports.channels.listByOwner(actor.userId, query.limit, query.cursor);
  return { channels: page.items.map((channel) => presentChannel(channel, scope.urls.baseUrl)), count: page.items.length, nextCursor: page.nextCursor };
}

export async function getChannel(scope: RequestScope, actor: UserActor, channelId: string, ports: Ports) {
  return presentChannel(await ownedChannel(actor, channelId, ports), scope.urls.baseUrl);
}

export interface ChannelChanges {
  readonly name?: string | undefined;
  readonly agentId?: string | undefined;
  readonly status?: 'active' | 'paused' | undefined;
  readonly platformConfig?: Record<string, unknown> | undefined;
  readonly allowedSenders?: string[] | undefined;
  readonly groupPolicy?: GroupPolicy | undefined;
  readonly allowedGroups?: string[] | undefined;
  readonly requireMention?: boolean | undefined;
  readonly initialPrompt?: string | null | undefined;
}

/**
 * SPEC 4.9 and part 3: `active` resets the failure counters (and lifts an automatic pause); new
 * config values are merged over the stored ones (a field left out keeps its value) and checked as
 * on create.
 */
export async function updateChannel(scope: RequestScope, actor: UserActor, channelId: string, input: ChannelChanges, ports: Ports) {
  const channel = await ownedChannel(actor, channelId, ports);
  if (input.agentId !== undefined && input.agentId !== channel.agentId)
    checkAgentFits(channel.platform, await chattableAgent(channel.ownerId, input.agentId, ports));
  const { platformConfig, ...changes } = input;
  // Only the fields given are written: the failure counter moves with atomic ADDs meanwhile
  // (undelivered replies), and an edit read before one must not set it back.
  const fields: Record<string, unknown> = { ...changes };
  if (platformConfig !== undefined) {
    const current = await openConfig(channel, ports);
    const merged = checkConfig(channel.platform, { ...current, ...platformConfig });
    // The bot platform's webhook secret is the platform's own, kept across edits.
    if (current['webhookSecret'] !== undefined) merged['webhookSecret'] = current['webhookSecret'];
    registerConfigSecrets(merged);
    // Registered again with the config given (a new bot token has no webhook yet; a new public URL
    // moves it), before anything is saved: refused, the channel keeps its working config.
    if (channel.platform === 'bot-messenger') await registerWebhook(scope, channel, merged, ports, true);
    Object.assign(fields, await sealed(channel, merged, ports));
  }
  // Made active: the counters start over. Paused or made active by its owner: no platform reason stands.
  if (input.status === 'active') Object.assign(fields, { failureCount: 0, consecutiveFailures: 0 });
  if (input.status !== undefined) fields['pausedReason'] = null;
  const saved = await ports.channels.update(channelId, fields, channel.updatedAt, ports.clock.now());
  if (saved === null) throw new ConflictError(`Channel ${channelId} was changed by another request; read it and try again.`);
  return presentChannel(saved, scope.urls.baseUrl);
}

/** Permanent; a bot-messenger channel's webhook is removed from the platform first. */
export async function deleteChannel(actor: UserActor, channelId: string, ports: Ports) {
  const channel = await ownedChannel(actor, channelId, ports);
  if (channel.platform === 'bot-messenger') await removeBotWebhook(ports, await openConfig(channel, ports));
  await ports.channels.delete(channelId, channel.ownerId);
  return { channelId, deleted: true };
}

/** Sends a test prompt to the channel's agent, in the owner's own test conversation. */
export async function testChannel(scope: RequestScope, actor: UserActor, channelId: string, message: string, ports: Ports) {
  const channel = await ownedChannel(actor, channelId, ports);
  const { reply, conversationId } = await chatOnChannel(channel, `test:${actor.userId}`, message, scope, ports);
  return { response: reply, conversationId };
}

export async function muteSender(actor: UserActor, channelId: string, input: { senderId: string; reason: string }, ports: Ports) {
  await ownedChannel(actor, channelId, ports);
  await ports.channels.updateSender(channelId, input.senderId, { muted: true, mutedReason: input.reason, mutedAt: ports.clock.now(), mutedBy: actor.userId });
  return { senderId: input.senderId, muted: true };
}

export async function unmuteSender(actor: UserActor, channelId: string, senderId: string, ports: Ports) {
  await ownedChannel(actor, channelId, ports);
  await ports.channels.updateSender(channelId, senderId, { muted: false });
  return { senderId, muted: false };
}

export async function listMutedSenders(actor: UserActor, channelId: string, ports: Ports) {
  await ownedChannel(actor, channelId, ports);
  const muted = await ports.channels.mutedSenders(channelId);
  return {
    mutedSenders: muted.map((sender) => ({
      senderId: sender.senderKey,
      reason: sender.mutedReason ?? '',
      mutedAt: new Date(sender.mutedAt ?? 0).toISOString(),
      mutedBy: sender.mutedBy ?? null,
    })),
    count: muted.length,
  };
}

/** SPEC 4.9: a manual message, no agent; phone-sms and phone-unified only. */
export async function sendMessage(actor: UserActor, channelId: string, input: { to: string; message: string }, ports: Ports) {
  const channel = await ownedChannel(actor, channelId, ports);
  if (channel.platform !== 'phone-sms' && channel.platform !== 'phone-unified')
    throw new ValidationError('Invalid request', [`send is supported for phone-sms and phone-unified channels, not ${channel.platform}`]);
  const messageId = await sendSms(ports, await openConfig(channel, ports), input.to, input.message);
  return { messageId, to: input.to };
}

/** SPEC 4.9: an outbound call whose answer connects the recipient to the voice agent. */
export async function callNumber(scope: RequestScope, actor: UserActor, channelId: string, to: string, ports: Ports) {
  const channel = await ownedChannel(actor, channelId, ports);
  if (channel.platform !== 'phone-voice' && channel.platform !== 'phone-unified')
    throw new ValidationError('Invalid request', [`call is supported for phone-voice and phone-unified channels, not ${channel.platform}`]);
  const refusal = await whyNoCalls(channel, ports);
  if (refusal !== null) throw new ValidationError('Invalid request', [`call: ${refusal.message}`]);
  const twiml = await voiceCallTwiml(channel, scope.urls, ports);
  const placed = await placeCall(ports, await openConfig(channel, ports), to, twiml);
  return { callId: placed.callId, to, status: placed.status };
}
