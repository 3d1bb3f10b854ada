import * as z from 'zod';

export { agentIdParams, browserChatQuery, chatBody } from './chat.schema.ts';

export const AGENT_DEFAULTS = { memoryMb: 1024, timeoutSec: 300, runtime: 'python3.12' } as const;
/**
 * Longest agent run: the streaming chat route stops at 895 s (Lambda's limit is 900), and a run
 * must end inside it with its own error marker, metrics and usage record.
 */
export const MAX_AGENT_TIMEOUT_SEC = 880;
/** Largest agent source accepted (the spec leaves it open): keeps items well under DynamoDB's 400 KB. */
export const MAX_SOURCE_BYTES = 256 * 1024;

export const agentNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lowercase letters and digits separated by single hyphens');

const sourceCodeSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_SOURCE_BYTES, `must be at most ${MAX_SOURCE_BYTES} bytes`);

const visibilitySchema = z.enum(['private', 'public']);
/**
 * A voice agent's voice (SPEC part 2 names them neutrally). The voice runtime hands user code the
 * model's name for it as the global `SVC_VOICE`: voice_1 is `tiffany` (warm professional female,
 * en-US), voice_2 `matthew` (clear friendly male, en-US), voice_3 `amy` (British English female),
 * Nova Sonic's voices.
 */
export const VOICES = { voice_1: 'tiffany', voice_2: 'matthew', voice_3: 'amy' } as const;
export type VoiceId = keyof typeof VOICES;
const voiceSchema = z.enum(['voice_1', 'voice_2', 'voice_3']);
/** `hidden` hides the source from everyone but the owner, as it does for MCP servers; `visible` is the default. */
const sourceVisibilitySchema = z.enum(['visible', 'hidden']);

export const createAgentBody = z.object({
  agentName: agentNameSchema,
  description: z.string().trim().min(1, 'must not be empty').max(2000),
  sourceCode: sourceCodeSchema,
  visibility: visibilitySchema.default('private'),
  sourceVisibility: sourceVisibilitySchema.default('visible'),
  runtime: z.literal('python3.12', { error: 'must be python3.12' }).default('python3.12'),
  memoryMb: z.number().int().min(128).max(10240).default(AGENT_DEFAULTS.memoryMb),
  timeoutSec: z.number().int().min(1).max(MAX_AGENT_TIMEOUT_SEC).default(AGENT_DEFAULTS.timeoutSec),
  agentType: z.enum(['text', 'bidi']).default('text'),
  initialPrompt: z.string().max(4000).optional(),
  /** Voice agents only; `voice_1` when omitted. */
  voice: voiceSchema.optional(),
});

export const updateAgentBody = z.object({
  agentId: z.uuid({ error: 'must be an agent id (UUID)' }),
  agentName: agentNameSchema.optional(),
  description: z.string().trim().min(1).max(2000).optional(),
  sourceCode: sourceCodeSchema.optional(),
  visibility: visibilitySchema.optional(),
  sourceVisibility: sourceVisibilitySchema.optional(),
  status: z.enum(['active', 'deleted']).optional(),
  initialPrompt: z.string().max(4000).nullable().optional(),
  agentType: z.enum(['text', 'bidi']).optional(),
  voice: voiceSchema.optional(),
  memoryMb: z.number().int().min(128).max(10240).optional(),
  timeoutSec: z.number().int().min(1).max(MAX_AGENT_TIMEOUT_SEC).optional(),
});

/** `POST /agent/check`: the source checker's verdict before saving (the same checker as create and update). */
export const checkAgentBody = z.object({
  sourceCode: sourceCodeSchema,
  agentType: z.enum(['text', 'bidi']).default('text'),
});

export const agentIdBody = z.object({ agentId: z.uuid({ error: 'must be an agent id (UUID)' }) });
export const slugParams = z.object({ owner: z.string().min(1).max(64), slug: agentNameSchema });

export const listAgentsQuery = z.object({
  visibility: z.enum(['all', 'public', 'private']).default('all'),
  status: z.enum(['active', 'deleted']).default('active'),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
  /** A `nextCursor` of an earlier page: the next page without skipping (a platform extra to SPEC 4.1's offset). */
  cursor: z.string().max(2048).optional(),
});

export type AgentStatus = 'active' | 'deleted';

/** A stored agent. `ownerId` is the tenant; the slug is `{owner alias}/{agentName}`. */
export interface AgentRecord {
  readonly agentId: string;
  readonly ownerId: string;
  readonly agentName: string;
  readonly description: string;
  readonly sourceCode: string;
  readonly agentType: 'text' | 'bidi';
  readonly visibility: 'private' | 'public';
  /** Whether readers other than the owner see `sourceCode`. */
  readonly sourceVisibility: 'visible' | 'hidden';
  readonly status: AgentStatus;
  readonly runtime: 'python3.12';
  readonly memoryMb: number;
  readonly timeoutSec: number;
  readonly initialPrompt: string | null;
  /** Voice agents: the voice (absent on agents stored before voices existed: `voice_1`). */
  readonly voice?: VoiceId | null;
  /** Present only on active public agents: the sparse `publicAgents` index lists them without a Scan. */
  readonly publicListing?: 'public';
  readonly invocationMonth: string | null;
  readonly invocationsThisMonth: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const conversationParams = z.object({
  agentId: z.uuid({ error: 'must be an agent id (UUID)' }),
  conversationId: z.uuid({ error: 'must be a conversation id (UUID)' }),
});

export const conversationListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) });

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** SPEC part 2, "Agent", as `presentAgent` shows it; `sourceCode` only on a single read the caller may see. */
export const agentResponse = z.object({
  agentId: z.string(),
  agentName: z.string(),
  description: z.string(),
  status: z.enum(['active', 'deleted']),
  visibility: visibilitySchema,
  sourceVisibility: sourceVisibilitySchema.describe('`hidden`: only the owner reads `sourceCode`'),
  runtime: z.literal('python3.12'),
  memoryMb: z.number().int(),
  timeoutSec: z.number().int(),
  agentType: z.enum(['text', 'bidi']).describe('`bidi` marks a voice agent'),
  initialPrompt: z.string().nullable(),
  voice: voiceSchema.nullable().describe('Voice agents only (null for text agents)'),
  owner: z.string().nullable().describe("The owner's alias (null before the owner chose one)"),
  slug: z.string().nullable().describe('`{owner}/{agentName}`; null while the owner has no alias'),
  invocationsPerMonth: z.number().int().describe('Chats this calendar month (UTC)'),
  endpointUrl: z.string().describe('The streaming chat URL'),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  updatedAt: z.number().describe('Milliseconds since the epoch'),
  sourceCode: z.string().optional(),
});

export const agentListResponse = z.object({
  agents: z.array(agentResponse),
  count: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const agentCheckResponse = z.object({
  ok: z.boolean().describe('True when create and update would accept this source'),
  problems: z
    .array(z.object({ line: z.number().int().describe('1-based line of the source'), message: z.string() }))
    .describe('Every rule the source breaks, with its line; empty when `ok`'),
});

export const agentDeletedResponse = z.object({ agentId: z.string(), status: z.enum(['active', 'deleted']), message: z.string() });

/** SPEC part 2, "Conversation", as list entries show it. */
export const conversationSummaryResponse = z.object({
  conversationId: z.string(),
  agentId: z.string(),
  title: z.string().describe('From the first prompt'),
  messageCount: z.number().int(),
  createdAt: z.number().describe('Milliseconds since the epoch'),
  updatedAt: z.number().describe('Milliseconds since the epoch'),
});

export const recentConversationsResponse = z.object({ conversations: z.array(conversationSummaryResponse), count: z.number().int() });
export const agentConversationsResponse = z.object({ agentId: z.string(), conversations: z.array(conversationSummaryResponse), count: z.number().int() });

const messageResponse = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  timestamp: z.number().describe('Milliseconds since the epoch'),
});

export const conversationResponse = z.object({
  conversation: conversationSummaryResponse.extend({ userId: z.string(), messages: z.array(messageResponse) }),
});

/** The buffered chat's answer (SPEC 4.1 shows only "the complete reply"). */
export const chatResponse = z.object({
  response: z.string().describe('The whole reply text'),
  conversationId: z.string().describe('Pass back as `conversationId` to continue the conversation'),
  agentId: z.string(),
  metrics: z
    .object({
      totalCycles: z.number().int(),
      totalTokens: z.number().int(),
      toolsUsed: z.array(z.string()),
      durationMs: z.number(),
    })
    .nullable()
    .describe("The run's figures; null when the run reported none"),
});
