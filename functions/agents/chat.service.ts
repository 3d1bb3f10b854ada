import { throwFirstFailure } from '../core/all-settled.ts';
import { runUrlsOf, type PublicUrls } from '../core/http/public-urls.ts';
import { assertAgentInScope, requireUser, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { creditsPerSecond, startRunMeter, type MeterTimers, type RunMeter } from '../core/credit-meter.ts';
import { CreditsRefusedError, roundCredits, type Credits } from '../core/credits.ts';
import {
  ExecutionFailedError,
  GoneError,
  InsufficientCreditsError,
  NotFoundError,
  ServiceUnavailableError,
  TimeoutError,
  UpstreamError,
  ValidationError,
  type PlatformError,
} from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import { uuid } from '../core/ids.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import { childLineageHeader, LINEAGE_HEADER } from '../core/http/lineage.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { RunTokens } from '../core/auth/run-token.ts';
import { registerSecret, scrubSecrets, StreamScrubber } from '../core/secret-scope.ts';
import { scrubSecretValues, type UsageLogWriter } from '../core/usage-log.ts';
import { admitEmbedUse } from '../embed/embed-admission.ts';
import { platformMcpUrl } from '../platform-tools/platform-mcp-url.ts';
import type { EmbedStore } from '../embed/embed.store.ts';
import type { Compute, FrameworkMessage, RuntimeEvent } from '../runtimes/compute.ts';
import type { AgentRecord } from './agent.schema.ts';
import { assertCanView, loadAgent, type AgentPorts } from './agent.service.ts';
import { mayContinue, titleFrom, type ConversationRecord, type StoredMessage } from './conversation.schema.ts';
import { boundFramework, frameworkMessagesFrom, textAsFramework, turnOf } from './framework-messages.ts';

export interface ChatPorts extends AgentPorts {
  readonly keysReader: KeysReader;
  readonly credits: Credits;
  readonly usageLogs: UsageLogWriter;
  readonly compute: Compute;
  readonly clock: Clock;
  readonly config: Config;
  readonly runTokens: RunTokens;
  /** Read only for embed visitors' credentials: the embed's status and quota, and what its chats spend. */
  readonly embeds: Pick<EmbedStore, 'get' | 'addUsage'>;
  /** The run-time meter's clock and timer (tests); the real ones otherwise. */
  readonly meterTimers?: MeterTimers;
}

/**
 * What the caller pays per chat besides run time: one credit, plus one per full thousand model
 * tokens the run reports. Tokens are user code's figure, so they can only add to the bill; whole
 * credits keep a short chat to a single debit.
 */
export function chatCost(totalTokens: number): number {
  return roundCredits(1 + Math.floor(Math.max(0, totalTokens) / 1000));
}

/**
 * Run time the chat's first credit covers. A turn's start (loading the agent and its framework)
 * takes a fraction of a second, so a short chat stays one debit.
 */
export const CHAT_INCLUDED_RUN_MS = 1000;

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
  /** For a transport that failed before `run`: waits for what `openChat` left in flight (the ledger line). */
  close(): Promise<void>;
}

/**
 * Runtime error codes as the agents API names them (SPEC part 7). The message is user code's text
 * (an exception may carry a key): it is scrubbed whoever the caller is.
 */
function toChatError(event: Extract<RuntimeEvent, { type: 'error' }>): PlatformError {
  const message = scrubSecrets(event.message);
  switch (event.code) {
    case 'AWS_CREDENTIALS_REQUIRED':
      return new ValidationError(message, [], 'AWS_CREDENTIALS_REQUIRED');
    case 'TIMEOUT':
      return new TimeoutError(message, 'TIMEOUT');
    case 'RUNTIME_UNAVAILABLE':
      // No runtime could be had (e.g. no Python): the agent's code is not at fault, and the message says what to install.
      return new ServiceUnavailableError(`The agent runtime is unavailable: ${message}`, 'RUNTIME_UNAVAILABLE');
    default:
      return new ExecutionFailedError(message, 'AGENT_EXECUTION_FAILED');
  }
}

/** A failure as the caller sees it (code and message from the one error table): for markers and records. */
export function errorOf(failure: PlatformError): { code: string; message: string } {
  const { code, message } = toErrorResponse(failure);
  return { code, message };
}

/** Why the meter stopped a run, as the caller sees it. */
function stoppedRunError(cause: unknown, agent: AgentRecord, ranMs: number): PlatformError {
  const seconds = Math.round(ranMs / 100) / 10;
  if (cause instanceof InsufficientCreditsError) {
    return new CreditsRefusedError(
      cause.required,
      cause.available,
      `The chat was stopped after ${seconds} s: the balance (${cause.available}) cannot pay for more run time (${agent.memoryMb} MB costs ${creditsPerSecond(agent.memoryMb)} credits a second).`,
    );
  }
  return new UpstreamError(`The chat was stopped after ${seconds} s: its run time could not be billed.`, 'BILLING_UNAVAILABLE');
}

/** The agent and the conversation as read, failures included: `openChat` checks them in its order. */
export type ChatReads = readonly [PromiseSettledResult<AgentRecord>, PromiseSettledResult<ConversationRecord | null>];

/**
 * A chat's first reads, the agent and the conversation being continued, at once. Reads only, and
 * settled rather than thrown, so the route can start them while the rate limiter answers and
 * `openChat` still checks them in order (the agent's answer first).
 */
export async function readChat(agentId: string, conversationId: string | undefined, ports: Pick<ChatPorts, 'agents' | 'conversations'>): Promise<ChatReads> {
  return Promise.allSettled([loadAgent(agentId, ports), conversationId === undefined ? Promise.resolve(null) : ports.conversations.get(conversationId)]);
}

/**
 * Everything that can refuse a chat happens here, before any byte is streamed: the agent (404,
 * 410 when deleted, 403 when private), the conversation (404 unless it is the caller's with this
 * agent) and the first credit (402). The run itself is `session.run()`.
 */
export async function openChat(
  scope: RequestScope,
  agentId: string,
  input: { prompt: string; conversationId?: string | undefined },
  ports: ChatPorts,
  /** What `readChat` already read for this request (the route's prefetch); read here otherwise. */
  reads?: ChatReads,
): Promise<ChatSession> {
  const actor = requireUser(scope.actor);
  assertAgentInScope(actor, agentId);
  const { lineage } = scope;
  // An embed visitor's credential works only while its embed is active and within its credit limit.
  const [agentRead, conversationRead] = await Promise.all([
    reads ?? readChat(agentId, input.conversationId, ports),
    actor.embedTokenId === undefined ? null : admitEmbedUse(actor.embedTokenId, 'chat', ports),
  ]).then(([chatReads]) => chatReads);
  if (agentRead.status === 'rejected') throw agentRead.reason;
  const agent = agentRead.value;
  if (agent.status === 'deleted') throw new GoneError(`Agent ${agentId} was deleted.`, 'AGENT_DELETED');
  assertCanView(actor, agent);
  if (agent.agentType === 'bidi') throw new ValidationError('Invalid request', ['agentId: voice agents are reached over the voice WebSocket, not chat']);

  if (conversationRead.status === 'rejected') throw conversationRead.reason;
  const conversation = conversationRead.value;
  let history: StoredMessage[] = [];
  let framework: FrameworkMessage[] | null = null;
  if (input.conversationId !== undefined) {
    if (conversation === null || !mayContinue(actor, conversation, agentId)) {
      throw new NotFoundError(`Conversation ${input.conversationId} not found.`, 'CONVERSATION_NOT_FOUND');
    }
    [history, framework] = await Promise.all([ports.conversations.messagesOf(conversation), ports.conversations.frameworkMessagesOf(conversation)]);
  }
  // The base credit is taken up front, so a caller without credits never starts a run. The run's
  // keys are read meanwhile (one read, shorter than the debit's two writes); no run without both.
  const reason = `chat ${agent.agentName}`;
  const [debited, keysRead] = await Promise.allSettled([
    ports.credits.debitWithPendingLine(actor.userId, 1, { reason, requestId: lineage.requestId }),
    ports.keysReader.readAllKeys(actor, agent.ownerId),
  ]);
  if (debited.status === 'rejected') throw debited.reason;
  if (keysRead.status === 'rejected') {
    // Refused before the stream: the line's failure, if any, is the error, as when it came first.
    await Promise.all([refundBaseCredit(scope, actor.userId, reason, ports), debited.value.line]);
    throw keysRead.reason;
  }
  // The first credit's ledger line is written while `__META__` goes out and the run starts, and
  // awaited before the stream ends. Once the stream has started a failure can no longer be the
  // answer's status: it is logged, and the chat (run, billed) stands.
  const ledgerLine = debited.value.line.then(
    () => undefined,
    (error: unknown) => scope.log.error('chat ledger line not written', { error, userId: actor.userId, reason }),
  );
  const keys = keysRead.value;
  const conversationId = conversation?.conversationId ?? uuid();

  let started = false;
  return {
    agent,
    conversationId,
    run: (signal) => {
      started = true;
      return runChat({
        ...scope,
        actor,
        agent,
        prompt: input.prompt,
        conversation,
        conversationId,
        history,
        framework,
        // A conversation stored before the agent's own list was kept continues from its text.
        sent: framework ?? textAsFramework(history),
        keys,
        ports,
        signal,
        ledgerLine,
      });
    },
    // A session whose run never started (the stream failed first) still waits for its line.
    close: () => (started ? Promise.resolve() : ledgerLine),
  };
}

/** Gives the first credit back when the chat failed before its run could start. */
async function refundBaseCredit(scope: RequestScope, userId: string, reason: string, ports: ChatPorts): Promise<void> {
  try {
    await ports.credits.grant(userId, 1, { reason: `${reason} refund: the run never started`, requestId: scope.lineage.requestId });
  } catch (error) {
    scope.log.error('chat credit refund failed', { error, userId });
  }
}

/** One chat run: the request's scope (its actor known to be a user), the agent and the conversation. */
interface RunContext extends Omit<RequestScope, 'actor' | 'signal'> {
  readonly actor: UserActor;
  readonly agent: AgentRecord;
  readonly prompt: string;
  readonly conversation: ConversationRecord | null;
  readonly conversationId: string;
  readonly history: StoredMessage[];
  /** The agent's own message list as stored (null when the conversation has none). */
  readonly framework: FrameworkMessage[] | null;
  /** What the run is given as `agent.messages`. */
  readonly sent: readonly FrameworkMessage[];
  /** The owner's keys the run receives (for the owner's role token only the attached ones). */
  readonly keys: Readonly<Record<string, string>>;
  readonly ports: ChatPorts;
  readonly signal: AbortSignal | undefined;
  /** The first credit's ledger line in flight (it never rejects: a failure is logged). */
  readonly ledgerLine: Promise<void>;
}

async function* runChat(ctx: RunContext): AsyncGenerator<ChatEvent> {
  const { actor, agent, ports, lineage } = ctx;
  const started = ports.clock.now();
  const promptAt = started;
  let reply = '';
  let failure: PlatformError | null = null;
  let metrics: ChatMetrics | null = null;
  let end: Extract<RuntimeEvent, { type: 'end' }> | null = null;
  let agentMessages: readonly unknown[] | null = null;
  const toolsSeen: string[] = [];

  const runUrls = runUrlsOf(ports.config, ctx.urls);
  const platformHosts = platformHostsOf(ctx.urls, runUrls);
  const { keys } = ctx;
  const runToken = await mintRunToken(ctx);
  // The keys are the owner's: what reaches a caller who is not the owner is scrubbed as it streams;
  // so is what reaches an agent-scoped credential (an embed's visitor acts as the owner but is not).
  const outgoing = actor.userId === agent.ownerId && actor.agents === undefined ? null : new StreamScrubber([...Object.values(keys), runToken]);
  const shown = (text: string) => (outgoing === null ? text : scrubSecrets(text));
  const invocation = {
    kind: 'agent' as const,
    source: agent.sourceCode,
    requestId: lineage.requestId,
    functionName: agent.agentName,
    timeoutMs: agent.timeoutSec * 1000,
    memoryMb: agent.memoryMb,
    env: { ...agentRunEnv(keys, agent.agentId, runUrls, ports.config.AWS_REGION), SVC_CONVERSATION_ID: ctx.conversationId },
    allowHosts: [...ports.config.AGENT_MODEL_HOSTS, ...platformHosts],
    platformCalls: platformCallsFor(ctx, platformHosts, runToken),
    prompt: ctx.prompt,
    messages: ctx.sent,
  };

  // Run time is paid ahead while the run goes; when the balance cannot pay the next stretch, the
  // run is stopped (the runtime then kills it) at the end of what was paid.
  const stop = new AbortController();
  const meter = startRunMeter({
    credits: ports.credits,
    userId: actor.userId,
    change: { reason: `chat ${agent.agentName} run time`, requestId: lineage.requestId },
    memoryMb: agent.memoryMb,
    includedMs: CHAT_INCLUDED_RUN_MS,
    tickMs: ports.config.CHAT_BILLING_TICK_SEC * 1000,
    onExhausted: (cause) => stop.abort(cause),
    ...(ports.meterTimers ? { timers: ports.meterTimers } : {}),
  });
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, stop.signal]) : stop.signal;

  try {
    for await (const event of ports.compute.invoke(agent.ownerId, invocation, signal)) {
      if (event.type === 'text') {
        reply += event.data;
        const visible = outgoing === null ? event.data : outgoing.push(event.data);
        if (visible !== '') yield { type: 'text', data: visible };
      } else if (event.type === 'tool') {
        toolsSeen.push(event.name);
        yield { type: 'tool', name: shown(event.name) };
      } else if (event.type === 'metrics') {
        metrics = { totalCycles: event.totalCycles, totalTokens: event.totalTokens, toolsUsed: event.toolsUsed.map(shown), durationMs: event.durationMs };
      } else if (event.type === 'error' && failure === null) {
        // The meter's abort comes back as the runtime's ABORTED: the caller learns why instead.
        failure = stop.signal.aborted ? stoppedRunError(stop.signal.reason, agent, meter.paidMs) : toChatError(event);
        const held = outgoing?.flush() ?? '';
        if (held !== '') yield { type: 'text', data: held };
        yield { type: 'error', error: failure };
      } else if (event.type === 'messages') {
        agentMessages = event.messages;
      } else if (event.type === 'end') {
        end = event;
      }
    }
    const held = outgoing?.flush() ?? '';
    if (held !== '') yield { type: 'text', data: held };
  } finally {
    await meter.stop();
    const durationMs = ports.clock.now() - started;
    const finalMetrics: ChatMetrics = metrics ?? { totalCycles: 0, totalTokens: 0, toolsUsed: [...new Set(toolsSeen)].map(shown), durationMs };
    // The conversation and the monthly counter do not depend on the bill: they go out while the
    // credits are settled; the usage record, which states them, after. All are awaited, as is the
    // first credit's ledger line, before `__METRICS__` and the end of the stream.
    const stored = Promise.allSettled([
      saveConversation(ctx, promptAt, reply, failure === null, failure === null ? agentMessages : null),
      ports.agents.countInvocation(agent.agentId, new Date(started).toISOString().slice(0, 7)),
      ctx.ledgerLine,
    ]);
    // A run whose consumer left before its `end` is taken to have started: nothing says it did not.
    const creditsUsed = await settleCredits(ctx, meter, { started: end?.started ?? true, durationMs: end?.durationMs ?? durationMs }, finalMetrics.totalTokens);
    const logged = Promise.allSettled([
      ...(actor.embedTokenId === undefined ? [] : [ports.embeds.addUsage(actor.embedTokenId, { credits: creditsUsed })]),
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
        ...(end?.maxRssKb !== undefined ? { maxMemoryUsedMb: Math.round(end.maxRssKb / 1024) } : {}),
        creditsUsed,
        ...(failure !== null ? { error: errorOf(failure) } : {}),
      }),
    ]);
    throwFirstFailure([...(await stored), ...(await logged)]);
    metrics = { ...finalMetrics, durationMs };
  }
  yield { type: 'metrics', metrics };
}

/**
 * Settles a chat from what the platform observed. A run whose code never started costs nothing:
 * the first credit and the run time paid ahead go back. A run that started keeps the first credit
 * and its run time by the platform's clock (past the included second, never more than was paid;
 * the rest of the last paid stretch goes back), whatever its error code; the token part, a figure
 * of user code, is taken on top when the balance allows (a shortfall is logged).
 */
async function settleCredits(
  ctx: RunContext,
  meter: RunMeter,
  observed: { readonly started: boolean; readonly durationMs: number },
  totalTokens: number,
): Promise<number> {
  const { ports, actor, agent, lineage } = ctx;
  try {
    const runTime = await meter.settle(observed.started ? observed.durationMs : 0);
    if (!observed.started) {
      await ports.credits.grant(actor.userId, 1, { reason: `chat ${agent.agentName} refund: the run never started`, requestId: lineage.requestId });
      return 0;
    }
    const tokens = roundCredits(chatCost(totalTokens) - 1);
    if (tokens <= 0) return roundCredits(1 + runTime);
    try {
      await ports.credits.debit(actor.userId, tokens, { reason: `chat ${agent.agentName} tokens`, requestId: lineage.requestId });
      return roundCredits(1 + runTime + tokens);
    } catch (error) {
      if (!(error instanceof InsufficientCreditsError)) throw error;
      ctx.log.warn('token credits not covered by the balance', { agentId: agent.agentId, tokens });
      return roundCredits(1 + runTime);
    }
  } catch (error) {
    // The run happened: its record and conversation are still written, with what was taken.
    ctx.log.error('settling chat credits failed', { agentId: agent.agentId, error });
    return roundCredits(1 + meter.paidCredits);
  }
}

/** The stored visitor of a conversation being continued, else the caller's when it is a visitor. */
function visitorOf(current: ConversationRecord | null, actor: UserActor): { visitorId?: string } {
  const visitorId = current === null ? actor.visitorId : current.visitorId;
  return visitorId === undefined ? {} : { visitorId };
}

/**
 * Appends the turn; a conversation changed meanwhile by a parallel chat is re-read and appended to.
 * Stored text has the request's secrets scrubbed, whoever the caller: records are not for keys.
 * The agent's own list (`reported`: the run's `messages`, null when the run failed or reported
 * none) replaces the stored one, scrubbed and bounded the same way; after a parallel chat's save,
 * this turn's part of it is appended to that chat's list instead. Without it the stored list stays
 * as it was: a failed run leaves nothing of itself in what the next run is given.
 */
async function saveConversation(ctx: RunContext, promptAt: number, rawReply: string, succeeded: boolean, reported: readonly unknown[] | null): Promise<void> {
  const { ports } = ctx;
  const prompt = scrubSecrets(ctx.prompt);
  const reply = scrubSecrets(rawReply);
  const turn: StoredMessage[] = [{ role: 'user', content: prompt, timestamp: promptAt }];
  if (succeeded || reply.length > 0) turn.push({ role: 'assistant', content: reply, timestamp: ports.clock.now() });
  const after = reported === null ? null : frameworkMessagesFrom(reported);
  const ownView = after === null ? null : (scrubSecretValues(after) as FrameworkMessage[]);
  const ownTurn = after === null ? null : (scrubSecretValues(turnOf(after, ctx.sent, ctx.prompt) ?? textAsFramework(turn)) as FrameworkMessage[]);
  let current = ctx.conversation;
  let history = ctx.history;
  let framework = ctx.framework;
  let conflicted = false;
  for (let attempt = 0; attempt < 5; attempt++) {
    const now = Math.max(ports.clock.now(), (current?.updatedAt ?? 0) + 1);
    const messages = [...history, ...turn];
    const agentList = ownView === null || ownTurn === null ? framework : conflicted ? [...(framework ?? textAsFramework(history)), ...ownTurn] : ownView;
    const saved = await ports.conversations.save(
      {
        conversationId: ctx.conversationId,
        agentId: ctx.agent.agentId,
        userId: ctx.actor.userId,
        userAgent: `${ctx.actor.userId}#${ctx.agent.agentId}`,
        // The visitor who started it stays its visitor, even when the owner continues it.
        ...visitorOf(current, ctx.actor),
        title: current?.title ?? titleFrom(prompt),
        messageCount: messages.length,
        createdAt: current?.createdAt ?? promptAt,
        updatedAt: now,
      },
      messages,
      current?.updatedAt ?? null,
      // A single turn too large to keep whole is kept as its text.
      agentList === null ? null : (boundFramework(agentList) ?? textAsFramework(turn)),
    );
    if (saved) return;
    conflicted = true;
    current = await ports.conversations.get(ctx.conversationId);
    [history, framework] =
      current === null ? [[], null] : await Promise.all([ports.conversations.messagesOf(current), ports.conversations.frameworkMessagesOf(current)]);
  }
  ctx.log.error('conversation not saved after retries', { conversationId: ctx.conversationId });
}

/**
 * Stored keys that reach a run as the model providers' standard variables, so each provider's
 * client finds its key as it would anywhere (Strands' OpenAIModel, AnthropicModel, GeminiModel).
 */
export const PROVIDER_KEY_VARIABLES: Readonly<Record<string, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
};

/**
 * What every agent run's environment holds, text chat and voice alike: the owner's keys (as
 * `SVC_KEYS_JSON` and, for model providers, the variables their clients read), the region (botocore
 * reads AWS_DEFAULT_REGION only), the agent's id and the platform MCP server's address.
 */
export function agentRunEnv(keys: Readonly<Record<string, string>>, agentId: string, urls: PublicUrls, region: string): Record<string, string> {
  return {
    SVC_KEYS_JSON: JSON.stringify(keys),
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    ...modelCredentials(keys),
    SVC_AGENT_ID: agentId,
    SVC_PLATFORM_MCP_URL: platformMcpUrl(urls),
  };
}

/**
 * Model-provider credentials for the run: an owner who stored keys named `aws_access_key_id` and
 * `aws_secret_access_key` (optionally `aws_session_token`, `aws_region`) gets them as the standard
 * AWS variables, so Strands' BedrockModel finds them; keys named `openai`, `anthropic` and
 * `gemini` arrive as PROVIDER_KEY_VARIABLES name them. The platform's own credentials never reach
 * user code; without these keys a Bedrock call fails with AWS_CREDENTIALS_REQUIRED. Every value is
 * a secret of the run: none of these names is in PUBLIC_RUN_ENV, so they are scrubbed from what
 * it prints.
 */
export function modelCredentials(keys: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, variable] of Object.entries(PROVIDER_KEY_VARIABLES)) {
    const value = keys[name];
    if (value) out[variable] = value;
  }
  const id = keys['aws_access_key_id'];
  const secret = keys['aws_secret_access_key'];
  if (!id || !secret) return out;
  return {
    ...out,
    AWS_ACCESS_KEY_ID: id,
    AWS_SECRET_ACCESS_KEY: secret,
    ...(keys['aws_session_token'] ? { AWS_SESSION_TOKEN: keys['aws_session_token'] } : {}),
    ...(keys['aws_region'] ? { AWS_REGION: keys['aws_region'], AWS_DEFAULT_REGION: keys['aws_region'] } : {}),
  };
}

/**
 * The platform's own hosts an agent may call: its MCP host (and the base host, where MCP lives
 * locally), as the public URLs and the run's own (`runUrlsOf`) name them: the agent is given the
 * latter, and its code may hold the former.
 */
export function platformHostsOf(...urls: readonly PublicUrls[]): string[] {
  return [...new Set(urls.flatMap((each) => [each.mcpUrl, each.baseUrl]).map((url) => new URL(url).host))];
}

/**
 * A short-lived credential of the agent's owner for the run's calls to the platform (so private MCP
 * servers of the owner answer and agent sources hold no secrets). A role-token caller who owns the
 * agent passes on only that token's keys.
 */
async function mintRunToken(ctx: RunContext): Promise<string> {
  const keys = ctx.actor.userId === ctx.agent.ownerId && ctx.actor.scope === 'role' ? ctx.actor.roleKeys : null;
  const token = await ctx.ports.runTokens.mint({ userId: ctx.agent.ownerId, keys }, ctx.agent.timeoutSec * 1000 + 60_000);
  registerSecret(token);
  return token;
}

/**
 * What the runtime adds to the run's requests to the platform: the run token and the chat's
 * lineage (so the MCP usage records join this chat's).
 */
function platformCallsFor(ctx: RunContext, hosts: string[], token: string) {
  return {
    hosts,
    headers: {
      authorization: `Bearer ${token}`,
      [LINEAGE_HEADER]: childLineageHeader(ctx.lineage, { conversationId: ctx.conversationId, agentId: ctx.agent.agentId }),
    },
  };
}
