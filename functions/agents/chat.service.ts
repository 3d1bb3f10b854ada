import { throwFirstFailure } from '../core/all-settled.ts';
import { runUrlsOf } from '../core/http/public-urls.ts';
import { assertAgentInScope, requireUser, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { creditsPerSecond, type MeterTimers } from '../core/credit-meter.ts';
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
import type { RequestScope } from '../core/request-scope.ts';
import type { RunTokens } from '../core/auth/run-token.ts';
import { openBilledRun, type BilledRun } from '../core/runs/billed-run.ts';
import { mintRunCredential, platformCallsOf, platformHostsOf } from '../core/runs/run-credential.ts';
import { scrubSecrets, StreamScrubber } from '../core/secret-scope.ts';
import { scrubSecretValues, type UsageLogWriter } from '../core/usage-log.ts';
import { admitEmbedUse } from '../embed/embed-admission.ts';
import type { EmbedStore } from '../embed/embed.store.ts';
import type { Compute, FrameworkMessage, RuntimeEvent } from '../runtimes/compute.ts';
import type { AgentRecord } from './agent.schema.ts';
import { agentRunEnv } from './agent-run-env.ts';
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
  if (input.conversationId !== undefined && (conversation === null || !mayContinue(actor, conversation, agentId))) {
    throw new NotFoundError(`Conversation ${input.conversationId} not found.`, 'CONVERSATION_NOT_FOUND');
  }
  // Everything that can refuse the caller before the credit is checked: the keys are read from
  // here on, while a continued conversation's history is, rather than after it.
  const keysRead = ports.keysReader.readAllKeys(actor, agent.ownerId);
  keysRead.catch(() => undefined);
  let history: StoredMessage[] = [];
  let framework: FrameworkMessage[] | null = null;
  if (conversation !== null) {
    [history, framework] = await Promise.all([ports.conversations.messagesOf(conversation), ports.conversations.frameworkMessagesOf(conversation)]);
  }
  // The base credit is taken up front, so a caller without credits never starts a run. The run's
  // keys are being read meanwhile (started above); no run without both.
  // The first credit's ledger line is written while `__META__` goes out and the run starts, and
  // awaited before the stream ends. Once the stream has started a failure can no longer be the
  // answer's status: it is logged, and the chat (run, billed) stands.
  const reason = `chat ${agent.agentName}`;
  const billed = await openBilledRun(
    {
      kind: 'chat',
      payer: actor.userId,
      upfront: { credits: 1, reason },
      lineFailure: 'logged',
      refunds: { notRun: `${reason} refund: the run never started`, notStarted: `${reason} refund: the run never started` },
      readKeys: () => keysRead,
      rate: {
        memoryMb: agent.memoryMb,
        includedMs: CHAT_INCLUDED_RUN_MS,
        tickMs: ports.config.CHAT_BILLING_TICK_SEC * 1000,
        reason: `${reason} run time`,
        ...(ports.meterTimers ? { timers: ports.meterTimers } : {}),
      },
      embedTokenId: actor.embedTokenId,
    },
    ports,
    scope,
  );
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
        billed,
        ports,
        signal,
      });
    },
    // A session whose run never started (the stream failed first) still waits for its line.
    close: () => (started ? Promise.resolve() : billed.line.then(() => undefined)),
  };
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
  /** The chat's billing: the first credit taken, its ledger line in flight, and the owner's keys (for the owner's role token only the attached ones). */
  readonly billed: BilledRun<Readonly<Record<string, string>>>;
  readonly ports: ChatPorts;
  readonly signal: AbortSignal | undefined;
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
  const { billed } = ctx;
  const { keys } = billed;
  const runToken = await mintRunCredential(ports.runTokens, actor, agent.ownerId, agent.timeoutSec * 1000);
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
    platformCalls: platformCallsOf(platformHosts, runToken, lineage, { conversationId: ctx.conversationId, agentId: agent.agentId }),
    prompt: ctx.prompt,
    messages: ctx.sent,
  };

  // Run time is paid ahead while the run goes; when the balance cannot pay the next stretch, the
  // run is stopped (the runtime then kills it) at the end of what was paid.
  const stop = new AbortController();
  billed.startMeter((cause) => stop.abort(cause));
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
        failure = stop.signal.aborted ? stoppedRunError(stop.signal.reason, agent, billed.paidMs) : toChatError(event);
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
    await billed.stopMeter();
    const durationMs = ports.clock.now() - started;
    const finalMetrics: ChatMetrics = metrics ?? { totalCycles: 0, totalTokens: 0, toolsUsed: [...new Set(toolsSeen)].map(shown), durationMs };
    // The conversation and the monthly counter do not depend on the bill: they go out while the
    // credits are settled; the usage record, which states them, after. All are awaited, as is the
    // first credit's ledger line, before `__METRICS__` and the end of the stream.
    const stored = Promise.allSettled([
      saveConversation(ctx, promptAt, reply, failure === null, failure === null ? agentMessages : null),
      ports.agents.countInvocation(agent.agentId, new Date(started).toISOString().slice(0, 7)),
    ]);
    // Settled from what the platform observed: a run whose code never started costs nothing; one
    // that started keeps the first credit and its run time by the platform's clock (past the
    // included second), whatever its error code; the token part, a figure of user code, is taken
    // on top when the balance allows. A run whose consumer left before its `end` is taken to have
    // started: nothing says it did not.
    const { written } = await billed.finish(
      {
        started: end?.started ?? true,
        usedMs: end?.durationMs ?? durationMs,
        extra: { credits: roundCredits(chatCost(finalMetrics.totalTokens) - 1), reason: `chat ${agent.agentName} tokens` },
      },
      {
        resourceId: agent.agentId,
        resourceType: 'agent',
        requestType: 'AGENT_CHAT',
        status: failure === null ? 'success' : failure instanceof TimeoutError ? 'timeout' : 'error',
        request: { prompt: ctx.prompt, conversationId: ctx.conversationId },
        response: { text: reply, metrics: finalMetrics },
        durationMs,
        memoryMb: agent.memoryMb,
        ...(end?.maxRssKb !== undefined ? { maxMemoryUsedMb: Math.round(end.maxRssKb / 1024) } : {}),
        ...(failure !== null ? { error: errorOf(failure) } : {}),
      },
    );
    throwFirstFailure([...(await stored), ...written]);
    metrics = { ...finalMetrics, durationMs };
  }
  yield { type: 'metrics', metrics };
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
