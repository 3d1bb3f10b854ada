import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { roundCredits, type Credits } from '../core/credits.ts';
import { ExecutionFailedError, GoneError, InsufficientCreditsError, NotFoundError, TimeoutError, ValidationError, type PlatformError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import type { Logger } from '../core/logger.ts';
import { childLineageHeader, LINEAGE_HEADER, type Lineage } from '../core/http/lineage.ts';
import type { RunTokens } from '../core/auth/run-token.ts';
import { registerSecret } from '../core/secret-scope.ts';
import { discoveryDocument } from '../platform/discovery.service.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import type { KeyStore } from '../keys/key.store.ts';
import type { Compute, FrameworkMessage, RuntimeEvent } from '../runtimes/compute.ts';
import type { AgentRecord } from './agent.schema.ts';
import { assertCanView, loadAgent, type AgentPorts } from './agent.service.ts';
import { titleFrom, type ConversationRecord, type StoredMessage } from './conversation.schema.ts';

export interface ChatPorts extends AgentPorts {
  readonly keys: KeyStore;
  readonly keysReader: KeysReader;
  readonly credits: Credits;
  readonly usageLogs: UsageLogWriter;
  readonly compute: Compute;
  readonly clock: Clock;
  readonly config: Config;
  readonly log: Logger;
  readonly runTokens: RunTokens;
}

/**
 * What the caller pays per chat: one credit, plus one per full thousand model tokens the run
 * reports. Whole credits mean a short chat is a single debit rather than two writes for a fraction.
 */
export function chatCost(totalTokens: number): number {
  return roundCredits(1 + Math.floor(Math.max(0, totalTokens) / 1000));
}

/** What a chat yields, in order, whatever the transport (stream markers or one buffered reply). */
export type ChatEvent =
  | { readonly type: 'text'; readonly data: string }
  | { readonly type: 'tool'; readonly name: string }
  | { readonly type: 'error'; readonly error: PlatformError }
  | { readonly type: 'metrics'; readonly metrics: ChatMetrics };

export interface ChatMetrics {
  readonly totalCycles: number;
  readonly totalTokens: number;
  readonly toolsUsed: readonly string[];
  readonly durationMs: number;
}

export interface ChatSession {
  readonly agent: AgentRecord;
  readonly conversationId: string;
  /** Runs the agent; yields as the agent produces; saves the conversation, debits and logs at the end. */
  run(signal?: AbortSignal): AsyncGenerator<ChatEvent>;
}

/** Runtime error codes as the agents API names them (SPEC part 7). */
function toChatError(event: Extract<RuntimeEvent, { type: 'error' }>): PlatformError {
  switch (event.code) {
    case 'AWS_CREDENTIALS_REQUIRED':
      return new ValidationError(event.message, [], 'AWS_CREDENTIALS_REQUIRED');
    case 'TIMEOUT':
      return new TimeoutError(event.message, 'TIMEOUT');
    default:
      return new ExecutionFailedError(event.message, 'AGENT_EXECUTION_FAILED');
  }
}

function toFramework(messages: readonly StoredMessage[]): FrameworkMessage[] {
  return messages.map((m) => ({ role: m.role, content: [{ text: m.content }] }));
}

/**
 * Everything that can refuse a chat happens here, before any byte is streamed: the agent (404,
 * 410 when deleted, 403 when private), the conversation (404 unless it is the caller's with this
 * agent) and the first credit (402). The run itself is `session.run()`.
 */
export async function openChat(
  actor: UserActor,
  agentId: string,
  input: { prompt: string; conversationId?: string | undefined },
  ports: ChatPorts,
  lineage: Lineage,
  requestBaseUrl: string,
): Promise<ChatSession> {
  const agent = await loadAgent(agentId, ports);
  if (agent.status === 'deleted') throw new GoneError(`Agent ${agentId} was deleted.`, 'AGENT_DELETED');
  assertCanView(actor, agent);
  if (agent.agentType === 'bidi') throw new ValidationError('Invalid request', ['agentId: voice agents are reached over the voice WebSocket, not chat']);

  let conversation: ConversationRecord | null = null;
  let history: StoredMessage[] = [];
  if (input.conversationId !== undefined) {
    conversation = await ports.conversations.get(input.conversationId);
    if (conversation === null || conversation.userId !== actor.userId || conversation.agentId !== agentId) {
      throw new NotFoundError(`Conversation ${input.conversationId} not found.`, 'CONVERSATION_NOT_FOUND');
    }
    history = await ports.conversations.messagesOf(conversation);
  }
  // The base credit is taken up front, so a caller without credits never starts a run.
  await ports.credits.debit(actor.userId, 1, { reason: `chat ${agent.agentName}`, requestId: lineage.requestId });
  const conversationId = conversation?.conversationId ?? uuid();

  return {
    agent,
    conversationId,
    run: (signal) => runChat({ actor, agent, prompt: input.prompt, conversation, conversationId, history, ports, lineage, signal, requestBaseUrl }),
  };
}

interface RunContext {
  readonly actor: UserActor;
  readonly agent: AgentRecord;
  readonly prompt: string;
  readonly conversation: ConversationRecord | null;
  readonly conversationId: string;
  readonly history: StoredMessage[];
  readonly ports: ChatPorts;
  readonly lineage: Lineage;
  readonly signal: AbortSignal | undefined;
  readonly requestBaseUrl: string;
}

async function* runChat(ctx: RunContext): AsyncGenerator<ChatEvent> {
  const { actor, agent, ports, lineage } = ctx;
  const started = ports.clock.now();
  const promptAt = started;
  let reply = '';
  let failure: PlatformError | null = null;
  let metrics: ChatMetrics | null = null;
  let maxRssKb: number | undefined;
  const toolsSeen: string[] = [];

  const platformHosts = platformHostsOf(ports.config, ctx.requestBaseUrl);
  const keyNames = (await ports.keys.list(agent.ownerId)).map((k) => k.serviceName);
  const keys = await ports.keysReader.readKeys(actor, agent.ownerId, keyNames);
  const invocation = {
    kind: 'agent' as const,
    source: agent.sourceCode,
    requestId: lineage.requestId,
    functionName: agent.agentName,
    timeoutMs: agent.timeoutSec * 1000,
    memoryMb: agent.memoryMb,
    env: { SVC_KEYS_JSON: JSON.stringify(keys), AWS_REGION: ports.config.AWS_REGION, ...modelCredentials(keys), SVC_AGENT_ID: agent.agentId, SVC_CONVERSATION_ID: ctx.conversationId },
    allowHosts: [MODEL_PROVIDER_HOSTS, ...platformHosts].flat(),
    platformCalls: await platformCallsFor(ctx, platformHosts),
    prompt: ctx.prompt,
    messages: toFramework(ctx.history),
  };

  try {
    for await (const event of ports.compute.invoke(agent.ownerId, invocation, ctx.signal)) {
      if (event.type === 'text') {
        reply += event.data;
        yield { type: 'text', data: event.data };
      } else if (event.type === 'tool') {
        toolsSeen.push(event.name);
        yield { type: 'tool', name: event.name };
      } else if (event.type === 'metrics') {
        metrics = { totalCycles: event.totalCycles, totalTokens: event.totalTokens, toolsUsed: event.toolsUsed, durationMs: event.durationMs };
      } else if (event.type === 'error' && failure === null) {
        failure = toChatError(event);
        yield { type: 'error', error: failure };
      } else if (event.type === 'end') {
        maxRssKb = event.maxRssKb;
      }
    }
  } finally {
    const durationMs = ports.clock.now() - started;
    const finalMetrics: ChatMetrics = metrics ?? { totalCycles: 0, totalTokens: 0, toolsUsed: [...new Set(toolsSeen)], durationMs };
    const creditsUsed = await settleCredits(ctx, finalMetrics.totalTokens);
    // Independent writes: the conversation, the monthly counter and the usage record go together.
    await Promise.all([
      saveConversation(ctx, promptAt, reply, failure === null),
      ports.agents.countInvocation(agent.agentId, new Date(started).toISOString().slice(0, 7)),
      ports.usageLogs.write({
        lineage,
        userId: actor.userId,
        resourceId: agent.agentId,
        resourceType: 'agent',
        requestType: 'AGENT_CHAT',
        status: failure === null ? 'success' : failure instanceof TimeoutError ? 'timeout' : 'error',
        request: { prompt: ctx.prompt, conversationId: ctx.conversationId },
        response: { text: reply, metrics: finalMetrics },
        durationMs,
        memoryMb: agent.memoryMb,
        ...(maxRssKb !== undefined ? { maxMemoryUsedMb: Math.round(maxRssKb / 1024) } : {}),
        creditsUsed,
        ...(failure !== null ? { error: { code: failure.code ?? 'AGENT_EXECUTION_FAILED', message: failure.message } } : {}),
      }),
    ]);
    metrics = { ...finalMetrics, durationMs };
  }
  yield { type: 'metrics', metrics };
}

/**
 * The base credit was taken when the chat opened; the token part is taken now. If the balance ran
 * out meanwhile, what the run already cost is not taken back from a finished run: it is logged.
 */
async function settleCredits(ctx: RunContext, totalTokens: number): Promise<number> {
  const extra = roundCredits(chatCost(totalTokens) - 1);
  if (extra <= 0) return 1;
  try {
    await ctx.ports.credits.debit(ctx.actor.userId, extra, { reason: `chat ${ctx.agent.agentName} tokens`, requestId: ctx.lineage.requestId });
    return 1 + extra;
  } catch (error) {
    if (!(error instanceof InsufficientCreditsError)) throw error;
    ctx.ports.log.warn('token credits not covered by the balance', { agentId: ctx.agent.agentId, extra });
    return 1;
  }
}

/** Appends the turn; a conversation changed meanwhile by a parallel chat is re-read and appended to. */
async function saveConversation(ctx: RunContext, promptAt: number, reply: string, succeeded: boolean): Promise<void> {
  const { ports } = ctx;
  const turn: StoredMessage[] = [{ role: 'user', content: ctx.prompt, timestamp: promptAt }];
  if (succeeded || reply.length > 0) turn.push({ role: 'assistant', content: reply, timestamp: ports.clock.now() });
  let current = ctx.conversation;
  let history = ctx.history;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = Math.max(ports.clock.now(), (current?.updatedAt ?? 0) + 1);
    const messages = [...history, ...turn];
    const saved = await ports.conversations.save(
      {
        conversationId: ctx.conversationId,
        agentId: ctx.agent.agentId,
        userId: ctx.actor.userId,
        userAgent: `${ctx.actor.userId}#${ctx.agent.agentId}`,
        title: current?.title ?? titleFrom(ctx.prompt),
        messageCount: messages.length,
        createdAt: current?.createdAt ?? promptAt,
        updatedAt: now,
      },
      messages,
      current?.updatedAt ?? null,
    );
    if (saved) return;
    current = await ports.conversations.get(ctx.conversationId);
    history = current === null ? [] : await ports.conversations.messagesOf(current);
  }
  ports.log.error('conversation not saved after retries', { conversationId: ctx.conversationId });
}

/**
 * Model-provider credentials for the run: an owner who stored keys named `aws_access_key_id` and
 * `aws_secret_access_key` (optionally `aws_session_token`, `aws_region`) gets them as the standard
 * AWS variables, so Strands' BedrockModel finds them. The platform's own credentials never reach
 * user code; without these keys a model call fails with AWS_CREDENTIALS_REQUIRED.
 */
function modelCredentials(keys: Readonly<Record<string, string>>): Record<string, string> {
  const id = keys['aws_access_key_id'];
  const secret = keys['aws_secret_access_key'];
  if (!id || !secret) return {};
  return {
    AWS_ACCESS_KEY_ID: id,
    AWS_SECRET_ACCESS_KEY: secret,
    ...(keys['aws_session_token'] ? { AWS_SESSION_TOKEN: keys['aws_session_token'] } : {}),
    ...(keys['aws_region'] ? { AWS_REGION: keys['aws_region'], AWS_DEFAULT_REGION: keys['aws_region'] } : {}),
  };
}

/** Model provider endpoints an agent may reach besides the platform itself. */
const MODEL_PROVIDER_HOSTS = ['*.amazonaws.com'];

/** The platform's own hosts an agent may call: its MCP host (and the base host, where MCP lives locally). */
function platformHostsOf(config: Config, requestBaseUrl: string): string[] {
  const urls = discoveryDocument(config, requestBaseUrl);
  return [...new Set([urls.mcpUrl, urls.baseUrl].map((url) => new URL(url).host))];
}

/**
 * What the runtime adds to the run's requests to the platform: a short-lived credential of the
 * agent's owner (so private MCP servers of the owner answer and agent sources hold no secrets) and
 * the chat's lineage (so the MCP usage records join this chat's). A role-token caller who owns the
 * agent passes on only that token's keys.
 */
async function platformCallsFor(ctx: RunContext, hosts: string[]) {
  const keys = ctx.actor.userId === ctx.agent.ownerId && ctx.actor.scope === 'role' ? ctx.actor.roleKeys : null;
  const token = await ctx.ports.runTokens.mint({ userId: ctx.agent.ownerId, keys }, ctx.agent.timeoutSec * 1000 + 60_000);
  registerSecret(token);
  return {
    hosts,
    headers: {
      authorization: `Bearer ${token}`,
      [LINEAGE_HEADER]: childLineageHeader(ctx.lineage, { conversationId: ctx.conversationId, agentId: ctx.agent.agentId }),
    },
  };
}
