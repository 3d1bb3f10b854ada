import * as z from 'zod';
import type { SealedSecret } from '../core/secret-box.ts';

/** SPEC part 2: `phone-sms` and `phone-unified` exist as kinds too (voice and SMS on one number). */
export const PLATFORMS = [
  'workspace-chat',
  'community-chat',
  'bot-messenger',
  'phone-messenger',
  'phone-voice',
  'phone-sms',
  'phone-unified',
  'webhook',
] as const;
export type Platform = (typeof PLATFORMS)[number];

export type ChannelStatus = 'active' | 'paused';
export type GroupPolicy = 'disabled' | 'allowlist' | 'open';

/** A channel as stored. `platformConfig` is sealed whole; `configShown` holds what may be shown (masked secrets). */
export interface ChannelRecord {
  readonly channelId: string;
  readonly ownerId: string;
  readonly name: string;
  readonly platform: Platform;
  readonly agentId: string;
  readonly status: ChannelStatus;
  readonly sealedConfig: SealedSecret;
  readonly configShown: Readonly<Record<string, string>>;
  readonly allowedSenders: readonly string[];
  readonly groupPolicy: GroupPolicy;
  readonly allowedGroups: readonly string[];
  readonly requireMention: boolean;
  readonly initialPrompt: string | null;
  /** Deliveries whose reply could not be sent since the channel was last made active (SPEC part 3). */
  readonly failureCount: number;
  /** Failed deliveries since the last one that succeeded; absent on channels stored before it was kept. */
  readonly consecutiveFailures?: number;
  /** Why the platform paused the channel itself; null (or absent) when it is active or its owner paused it. */
  readonly pausedReason?: string | null;
  /** The latest failure (agent run, reply, webhook registration), secrets scrubbed; absent until one happens. */
  readonly lastError?: ChannelError | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Why a channel last failed, for its owner: `at` in epoch ms, a code, and a message that names the service. */
export interface ChannelError {
  readonly at: number;
  readonly code: string;
  readonly message: string;
}

/** Per channel and sender: the sender's conversation, mute and SMS opt-out. */
export interface SenderRecord {
  readonly channelId: string;
  readonly senderKey: string;
  readonly conversationId?: string;
  readonly muted?: boolean;
  readonly mutedReason?: string;
  readonly mutedAt?: number;
  readonly mutedBy?: string;
  /** SMS STOP: no replies until START. */
  readonly stopped?: boolean;
}

const E164 = /^\+[1-9]\d{6,14}$/;
const secret = z.string().min(1, 'must not be empty').max(4096);
const phoneConfig = z.object({
  accountSid: z.string().regex(/^AC[0-9a-zA-Z]{8,64}$/, 'must be an account SID (AC...)'),
  authToken: secret,
  phoneNumber: z.string().regex(E164, 'must be an E.164 phone number (+15551234567)'),
});

/**
 * platformConfig per platform (SPEC part 2 table). Two fields the table does not list are needed to
 * verify what the platform sends: the messenger's app secret (its `X-Hub-Signature-256` key), and,
 * for bot-messenger, the webhook secret the platform generates itself (never given by the owner).
 */
export const PLATFORM_CONFIG = {
  'workspace-chat': z.object({ signingSecret: secret, botToken: secret }),
  'community-chat': z.object({ publicKey: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the 64 hex characters of an Ed25519 public key'), botToken: secret }),
  'bot-messenger': z.object({ botToken: secret }),
  'phone-messenger': z.object({
    verifyToken: secret,
    accessToken: secret,
    phoneNumberId: z.string().regex(/^\d{1,32}$/, 'must be a phone number id'),
    appSecret: secret,
  }),
  'phone-voice': phoneConfig,
  'phone-sms': phoneConfig,
  'phone-unified': phoneConfig,
  webhook: z.object({ secret: secret.optional() }),
} satisfies Record<Platform, z.ZodObject>;

/** Config values shown as they are; every other value is a secret, shown masked. */
const PLAIN_FIELDS: ReadonlySet<string> = new Set(['publicKey', 'phoneNumberId', 'accountSid', 'phoneNumber']);

/** At most the last four characters, and none of a short secret (where four would be most of it). */
export function mask(value: string): string {
  return value.length >= 12 ? `****${value.slice(-4)}` : '****';
}

/** The config's secret values (every field not shown as it is). */
export function secretValues(config: Readonly<Record<string, string>>): string[] {
  return Object.entries(config)
    .filter(([field]) => !PLAIN_FIELDS.has(field))
    .map(([, value]) => value);
}

export function shownConfig(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).map(([field, value]) => [field, PLAIN_FIELDS.has(field) ? value : mask(value)]));
}

export const channelIdSchema = z.string().regex(/^ch-[0-9A-Za-z]{21}$/, 'is not a channel id');
export const channelIdParams = z.object({ channelId: channelIdSchema });
export const inboundParams = z.object({ channelId: z.string().max(64), platform: z.string().max(32) });

/** What the services send to a channel's webhookUrl: JSON from most, a form from the SMS and phone service. */
export const INBOUND_BODY_TYPES = ['application/json', 'application/x-www-form-urlencoded'] as const;
/** What a webhookUrl answers: JSON, TwiML for the SMS and phone service, the echoed challenge of a verification. */
export const INBOUND_ANSWER_TYPES = ['application/json', 'text/xml', 'text/plain'] as const;

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const agentId = z.uuid({ error: 'must be an agent id (UUID)' });
const senderIds = z.array(z.string().min(1).max(256)).max(1000);
const groupPolicy = z.enum(['disabled', 'allowlist', 'open'], { error: 'must be disabled, allowlist or open' });
const initialPrompt = z.string().max(2000, 'must be at most 2000 characters');

export const createChannelBody = z.object({
  name,
  platform: z.enum(PLATFORMS, { error: `must be one of ${PLATFORMS.join(', ')}` }),
  agentId,
  platformConfig: z.record(z.string(), z.unknown()),
  allowedSenders: senderIds.default([]),
  groupPolicy: groupPolicy.default('disabled'),
  allowedGroups: senderIds.default([]),
  requireMention: z.boolean().default(false),
  initialPrompt: initialPrompt.optional(),
});

export const updateChannelBody = z
  .object({
    name: name.optional(),
    agentId: agentId.optional(),
    status: z.enum(['active', 'paused'], { error: 'must be active or paused' }).optional(),
    platformConfig: z.record(z.string(), z.unknown()).optional(),
    allowedSenders: senderIds.optional(),
    groupPolicy: groupPolicy.optional(),
    allowedGroups: senderIds.optional(),
    requireMention: z.boolean().optional(),
    initialPrompt: initialPrompt.nullable().optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, agentId, status, platformConfig, allowedSenders, groupPolicy, allowedGroups, requireMention, initialPrompt',
  });

export const listChannelsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

export const testBody = z.object({ message: z.string().min(1, 'must not be empty').max(100_000) });
export const callBody = z.object({ to: z.string().regex(E164, 'must be an E.164 phone number (+15551234567)') });
export const sendBody = z.object({ to: z.string().min(1).max(256), message: z.string().min(1, 'must not be empty').max(1600) });
export const muteBody = z.object({ senderId: z.string().min(1).max(256), reason: z.string().max(500).default('') });
export const unmuteBody = z.object({ senderId: z.string().min(1).max(256) });

/** The inbound URL the platform is given (SPEC part 2). */
export function webhookUrlOf(baseUrl: string, channel: Pick<ChannelRecord, 'channelId' | 'platform'>): string {
  return `${baseUrl}/channels/inbound/${channel.channelId}/${channel.platform}`;
}

/** How a channel appears to its owner: SPEC part 2, secrets masked. */
export function presentChannel(channel: ChannelRecord, baseUrl: string) {
  return {
    channelId: channel.channelId,
    name: channel.name,
    platform: channel.platform,
    agentId: channel.agentId,
    status: channel.status,
    webhookUrl: webhookUrlOf(baseUrl, channel),
    platformConfig: channel.configShown,
    allowedSenders: channel.allowedSenders,
    groupPolicy: channel.groupPolicy,
    allowedGroups: channel.allowedGroups,
    requireMention: channel.requireMention,
    initialPrompt: channel.initialPrompt,
    failureCount: channel.failureCount,
    pausedReason: channel.pausedReason ?? null,
    lastError: channel.lastError
      ? { at: new Date(channel.lastError.at).toISOString(), code: channel.lastError.code, message: channel.lastError.message }
      : null,
    createdAt: new Date(channel.createdAt).toISOString(),
    updatedAt: new Date(channel.updatedAt).toISOString(),
  };
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const channelStatusSchema = z.enum(['active', 'paused']);
const isoTime = z.string().describe('ISO timestamp');

/** SPEC part 2, "Channel", as `presentChannel` shows it: secrets in `platformConfig` masked. */
export const channelResponse = z.object({
  channelId: z.string(),
  name: z.string(),
  platform: z.enum(PLATFORMS),
  agentId: z.string(),
  status: channelStatusSchema,
  webhookUrl: z.string().describe('Where the platform delivers: `{base_url}/channels/inbound/{channelId}/{platform}`'),
  platformConfig: z.record(z.string(), z.string()).describe('The credentials, sensitive values masked'),
  allowedSenders: z.array(z.string()).readonly(),
  groupPolicy: z.enum(['disabled', 'allowlist', 'open']),
  allowedGroups: z.array(z.string()).readonly(),
  requireMention: z.boolean(),
  initialPrompt: z.string().nullable(),
  failureCount: z.number().int().describe('Deliveries whose reply could not be sent since the channel was last made active'),
  pausedReason: z.string().nullable().describe('Why the platform paused the channel itself; null otherwise'),
  lastError: z.object({ at: isoTime, code: z.string(), message: z.string() }).nullable().describe('The latest failure, secrets scrubbed'),
  createdAt: isoTime,
  updatedAt: isoTime,
});

export const channelCreatedResponse = channelResponse.pick({
  channelId: true,
  name: true,
  platform: true,
  agentId: true,
  status: true,
  webhookUrl: true,
  createdAt: true,
});

export const channelListResponse = z.object({
  channels: z.array(channelResponse),
  count: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const channelDeletedResponse = z.object({ channelId: z.string(), deleted: z.boolean().describe('Always true') });
export const channelTestResponse = z.object({
  response: z.string().describe("The agent's reply"),
  conversationId: z.string().describe("The owner's test conversation on this channel"),
});
export const senderMutedResponse = z.object({ senderId: z.string(), muted: z.boolean() });
export const mutedSendersResponse = z.object({
  mutedSenders: z.array(
    z.object({ senderId: z.string(), reason: z.string(), mutedAt: isoTime, mutedBy: z.string().nullable().describe('User id of who muted the sender') }),
  ),
  count: z.number().int(),
});
export const messageSentResponse = z.object({ messageId: z.string().describe("The platform's message id"), to: z.string() });
export const callPlacedResponse = z.object({
  callId: z.string().describe("The platform's call id"),
  to: z.string(),
  status: z.string().describe("The platform's call status, e.g. `queued`"),
});
