import * as z from 'zod';

/** SPEC part 2, "Embed token": defaults and bounds. */
export const DEFAULT_COLOR = '#6366f1';
export const DEFAULT_PLACEHOLDER = 'Ask me anything...';
export const DEFAULT_RATE_LIMIT_PER_DAY = 1000;
export const DEFAULT_RATE_LIMIT_PER_IP = 10;
export const MAX_AUTO_OPEN_DELAY_MS = 30_000;
export const DEFAULT_ALLOWED_DOMAINS: readonly string[] = ['localhost'];

export type EmbedMode = 'text' | 'voice' | 'both';
export type EmbedStatus = 'active' | 'revoked';

/** The widget options an embed carries (SPEC part 2, `config`); the script tag's attributes override them. */
export interface EmbedConfig {
  readonly greeting: string | null;
  readonly color: string;
  readonly position: 'bottom-right' | 'bottom-left';
  readonly mode: EmbedMode;
  readonly agentName: string | null;
  readonly title: string | null;
  readonly subtitle: string | null;
  readonly logoUrl: string | null;
  readonly initialPrompt: string | null;
  readonly placeholder: string;
  readonly size: 'compact' | 'standard' | 'large';
  readonly autoOpen: boolean;
  readonly autoOpenDelay: number;
}

/** An embed token as stored: the token itself never is, only its digest and a prefix to tell it apart. */
export interface EmbedRecord {
  readonly embedTokenId: string;
  readonly ownerId: string;
  readonly digest: string;
  readonly tokenPrefix: string;
  readonly agentId: string | null;
  readonly voiceAgentId: string | null;
  readonly allowedDomains: readonly string[];
  readonly config: EmbedConfig;
  readonly rateLimitPerDay: number;
  readonly rateLimitPerIp: number;
  readonly minutesLimit: number | null;
  readonly creditLimit: number | null;
  /** Voice minutes and credits spent through this token's visitors (atomic ADDs after each chat or call). */
  readonly minutesUsed: number;
  readonly creditsUsed: number;
  readonly status: EmbedStatus;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const embedTokenIdSchema = z.string().regex(/^emb-[0-9A-Za-z]{21}$/, 'is not an embed token id');
export const embedTokenIdParams = z.object({ embedTokenId: embedTokenIdSchema });

/**
 * One allowed-domain entry: a host (`example.com`), with a port (`localhost:3000`), a subdomain
 * wildcard (`*.example.com`) or `*`. A scheme or path pasted with it is dropped: origins are
 * matched on host and port only.
 */
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .transform((value) => value.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/\/.*$/, ''))
  .refine(
    (value) => value === '*' || /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/.test(value),
    {
      error: (issue) => `"${String(issue.input)}" is not a domain (host, host:port, *.domain or *)`,
    },
  );
const allowedDomains = z.array(domain).min(1, 'must list at least one domain').max(50, 'must list at most 50 domains');

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const color = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'must be a hex colour such as #6366f1');
const agentId = z.uuid({ error: 'must be an agent id (UUID)' });
const limitCount = z.number().int('must be a whole number').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000');
const quota = z.number().min(0, 'must not be negative').max(1e9, 'must be at most 1000000000').nullable();

/** The widget options, as given at create (top level or in `config`) or in an update's `config`. */
export const configFields = {
  greeting: text(1000).optional(),
  color: color.optional(),
  position: z.enum(['bottom-right', 'bottom-left'], { error: 'must be bottom-right or bottom-left' }).optional(),
  agentName: text(200).optional(),
  title: text(200).optional(),
  subtitle: text(300).optional(),
  logoUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .max(2048)
    .optional(),
  initialPrompt: text(4000).optional(),
  placeholder: text(200).optional(),
  size: z.enum(['compact', 'standard', 'large'], { error: 'must be compact, standard or large' }).optional(),
  autoOpen: z.boolean().optional(),
  autoOpenDelay: z.number().int().min(0, 'must not be negative').max(MAX_AUTO_OPEN_DELAY_MS, `must be at most ${MAX_AUTO_OPEN_DELAY_MS}`).optional(),
  mode: z.enum(['text', 'voice', 'both'], { error: 'must be text, voice or both' }).optional(),
};
const configObject = z.object(configFields).strict();
export type ConfigInput = z.infer<typeof configObject>;

/** What both create and update may set: where the token works, its limits, and the widget options. */
const settingFields = {
  allowedDomains: allowedDomains.optional(),
  rateLimitPerDay: limitCount.optional(),
  rateLimitPerIp: limitCount.optional(),
  minutesLimit: quota.optional(),
  creditLimit: quota.optional(),
  config: configObject.optional(),
};

export const createEmbedBody = z
  .object({
    agentId: agentId.optional(),
    voiceAgentId: agentId.optional(),
    ...settingFields,
    ...configFields,
  })
  .refine((body) => body.agentId !== undefined || body.voiceAgentId !== undefined, {
    error: 'give agentId (a text agent), voiceAgentId (a voice agent) or both',
    path: ['agentId'],
  });
export type CreateEmbedInput = z.infer<typeof createEmbedBody>;

export const updateEmbedBody = z
  .object({
    ...settingFields,
    status: z.enum(['active', 'revoked'], { error: 'must be active or revoked' }).optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of allowedDomains, rateLimitPerDay, rateLimitPerIp, minutesLimit, creditLimit, config, status',
  });
export type UpdateEmbedInput = z.infer<typeof updateEmbedBody>;

export const listEmbedsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

const embedToken = z.string().min(1, 'is required').max(200, 'is not an embed token');
export const embedConfigQuery = z.object({ token: embedToken });
export const embedChatBody = z.object({
  token: embedToken,
  // Any string: a stale or foreign one is not an error, the visitor simply starts anew.
  visitorToken: z
    .string()
    .max(4096, 'is not a visitor token')
    .optional()
    .describe('The visitorToken an earlier POST /embed/chat returned to this browser, so the new bearer keeps its visitor (and conversations).'),
});

/** How an owner sees a token in listings (SPEC 4.10 `GET /embed/list`), plus the counters and limits. */
export function presentEmbed(record: EmbedRecord) {
  return {
    embedTokenId: record.embedTokenId,
    tokenPrefix: record.tokenPrefix,
    agentId: record.agentId,
    voiceAgentId: record.voiceAgentId,
    allowedDomains: record.allowedDomains,
    config: record.config,
    rateLimitPerDay: record.rateLimitPerDay,
    rateLimitPerIp: record.rateLimitPerIp,
    minutesUsed: record.minutesUsed,
    minutesLimit: record.minutesLimit,
    creditsUsed: record.creditsUsed,
    creditLimit: record.creditLimit,
    status: record.status,
    createdAt: record.createdAt,
  };
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

const embedModeResponse = z.enum(['text', 'voice', 'both']);

/** The widget's options (SPEC part 2, "Embed token"), every one filled in. */
const embedConfigResponse = z.object({
  greeting: z.string().nullable(),
  color: z.string().describe('Hex colour'),
  position: z.enum(['bottom-right', 'bottom-left']),
  mode: embedModeResponse,
  agentName: z.string().nullable().describe('Name in the widget header'),
  title: z.string().nullable(),
  subtitle: z.string().nullable(),
  logoUrl: z.string().nullable(),
  initialPrompt: z.string().nullable().describe('Sent to the agent on first load; its reply is the opening message'),
  placeholder: z.string(),
  size: z.enum(['compact', 'standard', 'large']),
  autoOpen: z.boolean(),
  autoOpenDelay: z.number().int().describe('Milliseconds'),
});

/** An embed token as `presentEmbed` shows it: never the token itself. */
export const embedResponse = z.object({
  embedTokenId: z.string(),
  tokenPrefix: z.string().describe('The start of the publishable key, to tell tokens apart'),
  agentId: z.string().nullable().describe('The text chat agent'),
  voiceAgentId: z.string().nullable().describe('The voice agent'),
  allowedDomains: z.array(z.string()).readonly(),
  config: embedConfigResponse,
  rateLimitPerDay: z.number().int(),
  rateLimitPerIp: z.number().int(),
  minutesUsed: z.number(),
  minutesLimit: z.number().nullable().describe('Voice minutes; null is unlimited'),
  creditsUsed: z.number(),
  creditLimit: z.number().nullable().describe('Null is unlimited'),
  status: z.enum(['active', 'revoked']),
  createdAt: z.number().describe('Milliseconds since the epoch'),
});

/** Create answers the publishable key (shown this once) and a ready-made script tag. */
export const embedCreatedResponse = embedResponse.omit({ minutesUsed: true, creditsUsed: true }).extend({
  embedToken: z.string().describe('The publishable key (`emb_pk_live_...`), shown only here'),
  snippet: z.string().describe('A script tag that loads the widget with this token'),
});

export const embedListResponse = z.object({
  tokens: z.array(embedResponse),
  count: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const embedRevokedResponse = z.object({ embedTokenId: z.string(), status: z.literal('revoked'), message: z.string() });

/** What the widget shows (`GET /embed/config`). */
export const embedConfigPublicResponse = embedConfigResponse.extend({
  agentId: z.string().nullable(),
  voiceAgentId: z.string().nullable(),
});

/** `POST /embed/chat`: a short-lived credential for this embed's agents. */
export const embedChatResponse = z.object({
  agentId: z.string().nullable(),
  voiceAgentId: z.string().nullable(),
  bearerToken: z.string().describe("Bearer credential for the embed's agents only, billed to the owner"),
  visitorToken: z.string().describe('Send back as `visitorToken` to stay the same visitor (and continue its conversations)'),
  streamUrl: z.string().nullable().describe("The text agent's streaming chat URL; null without a text agent"),
  voiceUrl: z.string().optional().describe("The voice agent's WebSocket URL, where the voice host is configured"),
  expiresAt: z.number().describe('When `bearerToken` expires, milliseconds since the epoch'),
});
