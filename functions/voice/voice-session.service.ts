/**
 * The rules of a voice session, apart from its transport: who may open one (each refusal a close
 * code of its own), what it costs and when it must stop, and the record it leaves.
 *
 * Billing (SPEC part 8): 50 credits a minute, per started second, at least 2 a session. The 2
 * credits are taken when the session opens (a caller without them is refused with 4402) and pay
 * its first 2.4 s; from then on the run-time meter (core/credit-meter.ts) pays each stretch ahead,
 * by the platform's clock, and when the balance cannot pay another step the session is stopped at
 * the end of the paid time. At the end the session keeps its whole seconds (never more than was
 * paid) and the rest of the last stretch goes back. The time is counted from the agent's `started`
 * (its `start()` returned), as a text chat's from its code's start: the wait before is the
 * platform's, and a session whose agent never started costs nothing (the 2 credits go back).
 *
 * What the agent's code says reaches the caller through `callerView`: its transcripts, tool names
 * and errors are scrubbed of the owner's keys and the run token (and their base64 forms) with text
 * chat's scrubber, on every channel and whether the process runs here or was handed off.
 */
import { randomUUID } from 'node:crypto';
import { assertCanView } from '../agents/agent.service.ts';
import { VOICES, type AgentRecord, type VoiceId } from '../agents/agent.schema.ts';
import { agentRunEnv } from '../agents/agent-run-env.ts';
import { assertAgentInScope, type UserActor } from '../core/auth/actor.ts';
import { resolveActor } from '../core/auth/resolve-actor.ts';
import type { MeterTimers } from '../core/credit-meter.ts';
import { openBilledRun } from '../core/runs/billed-run.ts';
import { mintRunCredential, platformCallsOf, platformHostsOf } from '../core/runs/run-credential.ts';
import { StreamScrubber } from '../core/secret-scope.ts';
import { AccessDeniedError, QuotaExceededError } from '../core/errors.ts';
import { admitEmbedUse } from '../embed/embed-admission.ts';
import { publicUrls, runUrlsOf } from '../core/http/public-urls.ts';
import type { Lineage } from '../core/http/lineage.ts';
import type { Logger } from '../core/logger.ts';
import type { Ports } from '../ports.ts';
import {
  canHandOffBidiSessions,
  canHoldBidiSessions,
  type BidiEvent,
  type BidiSession,
  type BidiSessionSpec,
  type RemoteBidiCompute,
} from '../runtimes/compute.ts';
import { remoteBidiSession, type Rendezvous } from './handoff.ts';

/** SPEC part 8: about 50 credits a minute connected. */
export const VOICE_CREDITS_PER_MINUTE = 50;
/** SPEC part 8: the least a session costs. */
export const VOICE_MIN_CREDITS = 2;
const CREDITS_PER_SECOND = VOICE_CREDITS_PER_MINUTE / 60;
/** What the minimum pays for: 2.4 s. */
const INCLUDED_MS = Math.round((VOICE_MIN_CREDITS / CREDITS_PER_SECOND) * 1000);

/** WebSocket close codes of refusals (the table) and of the bridge's own limits. */
export const CLOSE = {
  notVoiceAgent: 4400,
  unauthenticated: 4401,
  noCredits: 4402,
  forbidden: 4403,
  noSuchAgent: 4404,
  idle: 4408,
  tooManySessions: 4429,
  unavailable: 1011,
} as const;

/** A session the bridge cannot open or must end: the close code and the reason sent with it. */
export class VoiceRefusal extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
    /** The `error` frame's code, sent before the close when the session had begun. */
    readonly errorCode: string = 'REFUSED',
  ) {
    super(message);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The caller and the agent, or the refusal: 4401 credentials, 4404 agent, 4403 someone's private
 * agent or a revoked embed, 4400 a text agent, 4429 an embed's spent quota. `maxSessionSec` is set
 * when an embed's voice minutes cap this session below the bridge's own limit.
 */
export async function authorizeVoice(token: string, agentId: string, ports: Ports): Promise<{ actor: UserActor; agent: AgentRecord; maxSessionSec?: number }> {
  let actor: UserActor;
  try {
    const resolved = await resolveActor(
      'required',
      { headers: { authorization: `Bearer ${token}` }, query: {} },
      { credentials: ports.credentials, identity: ports.identity, runTokens: ports.runTokens, now: ports.clock.now() },
    );
    if (resolved.kind !== 'user') throw new VoiceRefusal(CLOSE.unauthenticated, 'authentication required');
    actor = resolved;
  } catch (error) {
    if (error instanceof VoiceRefusal) throw error;
    throw new VoiceRefusal(CLOSE.unauthenticated, 'invalid or missing credentials');
  }
  const agent = UUID.test(agentId) ? await ports.agents.get(agentId) : null;
  if (agent === null || agent.status === 'deleted') throw new VoiceRefusal(CLOSE.noSuchAgent, `agent ${agentId} not found`);
  try {
    assertAgentInScope(actor, agentId);
    assertCanView(actor, agent);
  } catch (error) {
    if (error instanceof AccessDeniedError) throw new VoiceRefusal(CLOSE.forbidden, 'this agent is private');
    throw error;
  }
  if (agent.agentType !== 'bidi') throw new VoiceRefusal(CLOSE.notVoiceAgent, 'not a voice agent (agentType bidi)');
  if (actor.embedTokenId === undefined) return { actor, agent };
  try {
    const embed = await admitEmbedUse(actor.embedTokenId, 'voice', ports);
    if (embed.minutesLimit === null) return { actor, agent };
    return { actor, agent, maxSessionSec: Math.max(1, Math.floor((embed.minutesLimit - embed.minutesUsed) * 60)) };
  } catch (error) {
    if (error instanceof AccessDeniedError) throw new VoiceRefusal(CLOSE.forbidden, 'this embed token was revoked');
    if (error instanceof QuotaExceededError)
      throw new VoiceRefusal(CLOSE.tooManySessions, 'this widget has used up its voice minutes or credits', 'QUOTA_EXCEEDED');
    throw error;
  }
}

export interface VoiceLimits {
  readonly maxSessionSec: number;
  readonly billingTickSec: number;
}

/**
 * The initialPrompt of the phone channel a call came through, which overrides the agent's (SPEC
 * part 2). The channel is named by the call's TwiML, which the platform wrote; the lookup still
 * requires that it belong to the caller's token user and point at this agent, so a forged id can
 * only name a prompt the same owner set for the same agent.
 */
export async function channelInitialPrompt(channelId: string, actor: UserActor, agentId: string, ports: Ports): Promise<string | null> {
  const channel = /^ch-[0-9A-Za-z]{21}$/.test(channelId) ? await ports.channels.get(channelId) : null;
  if (channel === null || channel.ownerId !== actor.userId || channel.agentId !== agentId)
    throw new VoiceRefusal(CLOSE.forbidden, "the call names a channel that is not this agent's");
  return channel.initialPrompt;
}

/** A running, billed session: the agent's process and the meter. `finish` settles and records, once. */
export interface VoiceSession {
  readonly sessionId: string;
  readonly process: BidiSession;
  /** Aborted when the balance cannot pay for more time (the bridge then closes with 4402). */
  readonly exhausted: AbortSignal;
  finish(outcome: { error?: { code: string; message: string } | undefined; channel: string; turns: number }): Promise<{ seconds: number; credits: number }>;
}

/**
 * Takes the minimum, starts the agent's process and the meter. Refusals: 4402 when the minimum
 * cannot be paid, 1011 when no voice runtime can be had here.
 */
export async function startVoiceSession(
  actor: UserActor,
  agent: AgentRecord,
  ports: Ports,
  limits: VoiceLimits,
  lineage: Lineage,
  log: Logger,
  options: { initialPrompt?: string | null; rendezvous?: Rendezvous } = {},
): Promise<VoiceSession> {
  const { compute } = ports;
  const { rendezvous } = options;
  if (!canHoldBidiSessions(compute) && !(canHandOffBidiSessions(compute) && rendezvous !== undefined))
    throw new VoiceRefusal(CLOSE.unavailable, 'voice sessions cannot run here', 'RUNTIME_UNAVAILABLE');
  const sessionId = randomUUID();
  const reason = `voice ${agent.agentName}`;
  const timers: MeterTimers = {
    now: () => ports.clock.now(),
    after(ms, fn) {
      const timer = setTimeout(fn, ms);
      timer.unref();
      return () => clearTimeout(timer);
    },
  };
  const billed = await openBilledRun(
    {
      kind: 'voice',
      payer: actor.userId,
      upfront: { credits: VOICE_MIN_CREDITS, reason },
      line: 'written',
      refunds: { notRun: `${reason} refund: the session never started`, notStarted: `${reason} refund: the session never started` },
      refused: () => new VoiceRefusal(CLOSE.noCredits, `insufficient credits: a voice session needs at least ${VOICE_MIN_CREDITS}`, 'INSUFFICIENT_CREDITS'),
      readKeys: () => ports.keysReader.readAllKeys(actor, agent.ownerId).catch((error: unknown) => Promise.reject(unavailable(error))),
      rate: {
        memoryMb: agent.memoryMb,
        creditsPerSecond: CREDITS_PER_SECOND,
        includedMs: INCLUDED_MS,
        tickMs: limits.billingTickSec * 1000,
        reason: `${reason} time`,
        timers,
      },
      embedTokenId: actor.embedTokenId,
    },
    ports,
    { lineage, log },
  );
  function unavailable(error: unknown): VoiceRefusal {
    if (error instanceof VoiceRefusal) return error;
    log.error('voice session could not start', { error, agentId: agent.agentId });
    return new VoiceRefusal(CLOSE.unavailable, 'the voice runtime is unavailable', 'RUNTIME_UNAVAILABLE');
  }
  let process: BidiSession;
  let secrets: string[];
  try {
    const { keys } = billed;
    const urls = publicUrls(ports.config, ports.config.BASE_URL ?? 'http://localhost');
    const runUrls = runUrlsOf(ports.config, urls);
    const hosts = platformHostsOf(urls, runUrls);
    const runToken = await mintRunCredential(ports.runTokens, actor, agent.ownerId, limits.maxSessionSec * 1000);
    secrets = [...Object.values(keys), runToken];
    const spec: BidiSessionSpec = {
      source: agent.sourceCode,
      requestId: lineage.requestId,
      env: agentRunEnv(keys, agent.agentId, runUrls, ports.config.AWS_REGION),
      allowHosts: [...ports.config.AGENT_MODEL_HOSTS, ...hosts],
      platformCalls: platformCallsOf(hosts, runToken, lineage, { agentId: agent.agentId }),
      memoryMb: agent.memoryMb,
      maxSeconds: limits.maxSessionSec,
      voice: voiceOf(agent),
      initialPrompt: options.initialPrompt ?? agent.initialPrompt,
    };
    if (canHoldBidiSessions(compute)) process = await compute.openBidiSession(agent.ownerId, spec);
    else process = await handOff(compute as RemoteBidiCompute, rendezvous!, sessionId, agent.ownerId, spec);
  } catch (error) {
    await billed.abandon();
    throw unavailable(error);
  }

  const openedAt = ports.clock.now();
  const exhausted = new AbortController();
  // Started by the agent's `started`, not before: its start is not the caller's time.
  let liveFrom = 0;
  let finishing = false;
  const startMeter = () => {
    if (billed.metered || finishing) return;
    liveFrom = ports.clock.now();
    billed.startMeter((cause) => exhausted.abort(cause));
  };
  // The keys are the owner's: a caller who is not the owner (a phone caller, an embed's visitor,
  // another user of a public agent) gets what the agent says scrubbed, as in text chat.
  const forCaller = actor.userId !== agent.ownerId || actor.agents !== undefined;

  let finished: Promise<{ seconds: number; credits: number }> | undefined;
  return {
    sessionId,
    process: callerView(process, new CallerScrubber(secrets, forCaller), startMeter),
    exhausted: exhausted.signal,
    finish(outcome) {
      finishing = true;
      finished ??= (async () => {
        const durationMs = Math.max(0, ports.clock.now() - openedAt);
        // A session whose agent never started costs nothing. Else it keeps its started seconds of
        // live time, but never more whole seconds than were paid (a session stopped at the end of
        // its balance); they count against an embed visitor's minutes and credits (atomic ADDs).
        const { creditsUsed, keptMs, written } = await billed.finish(
          {
            started: billed.metered,
            usedMs: (paidMs) => Math.min(Math.ceil(Math.max(0, ports.clock.now() - liveFrom) / 1000), Math.floor(paidMs / 1000)) * 1000,
            countsMinutes: true,
          },
          ({ keptMs: kept }) => ({
            resourceId: agent.agentId,
            resourceType: 'voice',
            requestType: 'VOICE_SESSION',
            status: outcome.error === undefined ? 'success' : 'error',
            request: { sessionId, agentId: agent.agentId, channel: outcome.channel },
            response: { seconds: kept / 1000, turns: outcome.turns },
            durationMs,
            memoryMb: agent.memoryMb,
            ...(outcome.error !== undefined ? { error: outcome.error } : {}),
          }),
        );
        const [, embedUsage, record] = written;
        if (embedUsage?.status === 'rejected') log.error('embed usage not recorded', { error: embedUsage.reason, sessionId });
        if (record?.status === 'rejected') log.error('voice usage record not written', { error: record.reason, sessionId });
        return { seconds: keptMs / 1000, credits: creditsUsed };
      })();
      return finished;
    },
  };
}

/**
 * `process` as the bridge sees it: `started` starts the billing, and every event passes through
 * `scrubber` on its way to the caller.
 */
function callerView(process: BidiSession, scrubber: CallerScrubber, onStarted: () => void): BidiSession {
  async function* events(): AsyncGenerator<BidiEvent> {
    for await (const event of process.events) {
      if (event.type === 'started') onStarted();
      yield* scrubber.frames(event);
    }
  }
  return {
    events: events(),
    sendAudio: (pcm) => process.sendAudio(pcm),
    sendText: (text) => process.sendText(text),
    end: () => process.end(),
    kill: () => process.kill(),
    exited: process.exited,
  };
}

/**
 * Keeps secrets out of the frames user code's output makes. Errors are scrubbed for everyone (as
 * text chat's); transcripts and tool names for a caller who is not the owner (`forCaller`).
 * Transcript deltas (`isFinal` false: a provider's partial text) are scrubbed as a stream per
 * speaker, so a key cut across two deltas is caught; a final transcript is whole and is scrubbed
 * whole, after what the deltas held back.
 */
class CallerScrubber {
  private readonly whole: StreamScrubber;
  private readonly partial = new Map<string, StreamScrubber>();

  constructor(
    private readonly secrets: readonly string[],
    private readonly forCaller: boolean,
  ) {
    this.whole = new StreamScrubber(secrets);
  }

  *frames(event: BidiEvent): Generator<BidiEvent> {
    switch (event.type) {
      case 'error':
        yield { ...event, message: this.whole.scrub(event.message) };
        return;
      case 'tool':
        yield this.forCaller ? { ...event, name: this.whole.scrub(event.name) } : event;
        return;
      case 'transcript':
        if (!this.forCaller) {
          yield event;
          return;
        }
        if (!event.isFinal) {
          const text = this.streamOf(event.role).push(event.text);
          if (text !== '') yield { ...event, text };
          return;
        }
        yield* this.flush(event.role);
        yield { ...event, text: this.whole.scrub(event.text) };
        return;
      case 'end':
        for (const role of [...this.partial.keys()]) yield* this.flush(role);
        yield event;
        return;
      default:
        yield event;
    }
  }

  private streamOf(role: string): StreamScrubber {
    let stream = this.partial.get(role);
    if (stream === undefined) this.partial.set(role, (stream = new StreamScrubber(this.secrets)));
    return stream;
  }

  private *flush(role: string): Generator<BidiEvent> {
    const held = this.partial.get(role)?.flush() ?? '';
    if (held !== '') yield { type: 'transcript', text: held, role, isFinal: false };
  }
}

/** Hands the session to the runtime function and waits for it to connect back (handoff.ts). */
async function handOff(compute: RemoteBidiCompute, rendezvous: Rendezvous, sessionId: string, tenantId: string, spec: BidiSessionSpec): Promise<BidiSession> {
  const slot = await rendezvous.open(sessionId);
  const invocation = compute.handOffBidiSession(tenantId, spec, slot.handoff);
  // An invocation that fails before the runtime connected fails the session's start.
  invocation.catch((error: unknown) => slot.cancel(error instanceof Error ? error : new Error(String(error))));
  return remoteBidiSession(await slot.connected, invocation, spec.env);
}

/** The agent's voice; agents stored before voices existed speak with the first. */
export function voiceOf(agent: AgentRecord): VoiceId {
  return agent.voice && agent.voice in VOICES ? agent.voice : 'voice_1';
}
