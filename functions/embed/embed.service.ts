import { randomBytes } from 'node:crypto';
import { chattableAgent } from '../agents/chattable-agent.ts';
import { requireAlias, type UserActor } from '../core/auth/actor.ts';
import type { RunTokens } from '../core/auth/run-token.ts';
import { digestSecret, generateSecret, isWellFormedSecret, secretPrefixHint } from '../core/auth/secrets.ts';
import type { Clock } from '../core/clock.ts';
import { AccessDeniedError, AuthenticationRequiredError, ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import type { PublicUrls } from '../core/http/public-urls.ts';
import { sortableId } from '../core/ids.ts';
import type { RateLimiter } from '../core/rate-limit.ts';
import type { AgentRecord } from '../agents/agent.schema.ts';
import type { AgentStore } from '../agents/agent.store.ts';
import {
  DEFAULT_ALLOWED_DOMAINS,
  DEFAULT_COLOR,
  DEFAULT_PLACEHOLDER,
  DEFAULT_RATE_LIMIT_PER_DAY,
  DEFAULT_RATE_LIMIT_PER_IP,
  presentEmbed,
  type ConfigInput,
  type CreateEmbedInput,
  type EmbedConfig,
  type EmbedMode,
  type EmbedRecord,
  type UpdateEmbedInput,
} from './embed.schema.ts';
import { assertWithinQuota } from './embed-admission.ts';
import type { EmbedStore } from './embed.store.ts';
import { originAllowed } from './origin.ts';

export interface EmbedPorts {
  readonly embeds: EmbedStore;
  readonly agents: Pick<AgentStore, 'get'>;
  readonly rateLimiter: RateLimiter;
  readonly runTokens: RunTokens;
  readonly clock: Clock;
}

const DAY_SEC = 86_400;
/**
 * How long a browser keeps its visitor id: the visitor token is renewed with every new bearer, so
 * this is how long a visitor may stay away and still continue its conversations.
 */
export const VISITOR_TOKEN_TTL_MS = 30 * DAY_SEC * 1000;

/** Where the widget script is: the CDN host, or the local layout's prefix when none is configured. */
export function widgetScriptUrl(urls: PublicUrls): string {
  return `${urls.cdnUrl ?? `${urls.baseUrl}/cdn`}/widget.js`;
}

/**
 * The ready-made script tag (SPEC 4.10). `data-api` is the platform's own addition: the widget is
 * served from another host than the API, so it is told where the API is.
 */
export function snippetFor(record: Pick<EmbedRecord, 'agentId' | 'voiceAgentId' | 'config'>, embedToken: string, urls: PublicUrls): string {
  const attributes = [
    `src="${widgetScriptUrl(urls)}"`,
    `data-token="${embedToken}"`,
    ...(record.agentId === null ? [] : [`data-text-agent="${record.agentId}"`]),
    ...(record.voiceAgentId === null ? [] : [`data-voice-agent="${record.voiceAgentId}"`]),
    `data-api="${urls.baseUrl}"`,
    'async',
  ];
  return `<script ${attributes.join(' ')}></script>`;
}

/** Mode from the agents given: both, or the one there is. */
function modeOf(agentId: string | null, voiceAgentId: string | null): EmbedMode {
  if (agentId !== null && voiceAgentId !== null) return 'both';
  return agentId !== null ? 'text' : 'voice';
}

/**
 * The agent if the creator may chat with it (theirs or public, not deleted) and it is of the kind
 * the field asks for; a 400 naming the field otherwise, revealing nothing else about it.
 */
async function embeddableAgent(ownerId: string, field: 'agentId' | 'voiceAgentId', agentId: string, ports: Pick<EmbedPorts, 'agents'>): Promise<AgentRecord> {
  const agent = await chattableAgent(ownerId, agentId, ports, field);
  const wanted = field === 'agentId' ? 'text' : 'bidi';
  if (agent.agentType !== wanted) {
    const message =
      field === 'agentId' ? `agentId: ${agentId} is a voice agent; give it as voiceAgentId` : `voiceAgentId: ${agentId} is not a voice agent (agentType bidi)`;
    throw new ValidationError(`Invalid request: ${message}.`, [message]);
  }
  return agent;
}

function configFrom(input: ConfigInput, base: EmbedConfig): EmbedConfig {
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
  return { ...base, ...defined } as EmbedConfig;
}

export async function createEmbed(actor: UserActor, input: CreateEmbedInput, ports: EmbedPorts, urls: PublicUrls) {
  const owner = requireAlias(actor);
  const agentId = input.agentId ?? null;
  const voiceAgentId = input.voiceAgentId ?? null;
  const [text, voice] = await Promise.all([
    agentId === null ? null : embeddableAgent(owner.userId, 'agentId', agentId, ports),
    voiceAgentId === null ? null : embeddableAgent(owner.userId, 'voiceAgentId', voiceAgentId, ports),
  ]);
  const detected = modeOf(agentId, voiceAgentId);
  const { agentId: _a, voiceAgentId: _v, allowedDomains, config, rateLimitPerDay, rateLimitPerIp, minutesLimit, creditLimit, ...topLevel } = input;
  const defaults: EmbedConfig = {
    greeting: null,
    color: DEFAULT_COLOR,
    position: 'bottom-right',
    mode: detected,
    agentName: (text ?? voice)?.agentName ?? null,
    title: null,
    subtitle: null,
    logoUrl: null,
    initialPrompt: null,
    placeholder: DEFAULT_PLACEHOLDER,
    size: 'standard',
    autoOpen: false,
    autoOpenDelay: 0,
  };
  // Options may come at the top level (SPEC part 2 lists them as fields) or in `config`; `config` wins.
  const merged = configFrom(config ?? {}, configFrom(topLevel, defaults));
  checkMode(merged.mode, agentId, voiceAgentId);
  const now = ports.clock.now();
  const embedToken = generateSecret('embedToken');
  const record: EmbedRecord = {
    embedTokenId: sortableId('emb-', now),
    ownerId: owner.userId,
    digest: digestSecret(embedToken),
    tokenPrefix: secretPrefixHint(embedToken),
    agentId,
    voiceAgentId,
    allowedDomains: allowedDomains ?? DEFAULT_ALLOWED_DOMAINS,
    config: merged,
    rateLimitPerDay: rateLimitPerDay ?? DEFAULT_RATE_LIMIT_PER_DAY,
    rateLimitPerIp: rateLimitPerIp ?? DEFAULT_RATE_LIMIT_PER_IP,
    minutesLimit: minutesLimit ?? null,
    creditLimit: creditLimit ?? null,
    minutesUsed: 0,
    creditsUsed: 0,
    status: 'active',
    createdAt: now,
    updatedAt: now,
  };
  if (!(await ports.embeds.create(record))) throw new ConflictError('An embed token with this id is being created; try again.');
  return {
    embedTokenId: record.embedTokenId,
    embedToken,
    tokenPrefix: record.tokenPrefix,
    agentId,
    voiceAgentId,
    allowedDomains: record.allowedDomains,
    config: merged,
    rateLimitPerDay: record.rateLimitPerDay,
    rateLimitPerIp: record.rateLimitPerIp,
    minutesLimit: record.minutesLimit,
    creditLimit: record.creditLimit,
    snippet: snippetFor(record, embedToken, urls),
    status: record.status,
    createdAt: now,
  };
}

/** A mode the agents cannot serve is a 400: `voice` needs a voice agent, `text` a text agent, `both` both. */
function checkMode(mode: EmbedMode, agentId: string | null, voiceAgentId: string | null): void {
  const missing = (mode !== 'voice' && agentId === null) || (mode !== 'text' && voiceAgentId === null);
  if (missing) {
    const message = `config.mode: ${mode} needs ${mode === 'both' ? 'both agentId and voiceAgentId' : mode === 'text' ? 'agentId' : 'voiceAgentId'}`;
    throw new ValidationError(`Invalid request: ${message}.`, [message]);
  }
}

export async function listEmbeds(actor: UserActor, query: { limit: number; cursor?: string | undefined }, ports: Pick<EmbedPorts, 'embeds'>) {
  const page = await ports.embeds.listByOwner(actor.userId, query.limit, query.cursor);
  const tokens = page.items.map(presentEmbed);
  return { tokens, count: tokens.length, nextCursor: page.nextCursor };
}

/** The caller's token; someone else's is a 404 like a missing one, so ids reveal nothing. */
async function ownedEmbed(actor: UserActor, embedTokenId: string, ports: Pick<EmbedPorts, 'embeds'>): Promise<EmbedRecord> {
  const record = await ports.embeds.get(embedTokenId);
  if (record === null || record.ownerId !== actor.userId) throw new NotFoundError(`Embed token ${embedTokenId} not found.`);
  return record;
}

/** SPEC part 3: `status` moves between active and revoked; a config change is merged into the stored one. */
export async function updateEmbed(actor: UserActor, embedTokenId: string, input: UpdateEmbedInput, ports: Pick<EmbedPorts, 'embeds' | 'clock'>) {
  const record = await ownedEmbed(actor, embedTokenId, ports);
  const { config, ...rest } = input;
  const merged = config === undefined ? undefined : configFrom(config, record.config);
  if (merged !== undefined) checkMode(merged.mode, record.agentId, record.voiceAgentId);
  const updated = await ports.embeds.update(
    embedTokenId,
    { ...rest, ...(merged === undefined ? {} : { config: merged }) },
    record.updatedAt,
    ports.clock.now(),
  );
  if (updated === null) throw new ConflictError(`Embed token ${embedTokenId} changed meanwhile; read it again and retry.`);
  return presentEmbed(updated);
}

/** SPEC 4.10: DELETE is a soft revoke; the widget stops at once (every use re-reads the record). */
export async function revokeEmbed(actor: UserActor, embedTokenId: string, ports: Pick<EmbedPorts, 'embeds' | 'clock'>) {
  const record = await ownedEmbed(actor, embedTokenId, ports);
  if (record.status === 'revoked') return { embedTokenId, status: 'revoked' as const, message: 'Embed token revoked.' };
  const updated = await ports.embeds.update(embedTokenId, { status: 'revoked' }, record.updatedAt, ports.clock.now());
  if (updated === null) throw new ConflictError(`Embed token ${embedTokenId} changed meanwhile; try again.`);
  return { embedTokenId, status: 'revoked' as const, message: 'Embed token revoked.' };
}

/**
 * The active token a page presents, from a page the token allows. Unknown, malformed and revoked
 * tokens are 401 (the same answer, so tokens cannot be probed); a page on another origin is 403.
 */
async function presentedEmbed(embedToken: string, origin: string | undefined, ports: Pick<EmbedPorts, 'embeds'>): Promise<EmbedRecord> {
  if (!isWellFormedSecret('embedToken', embedToken)) throw new AuthenticationRequiredError();
  const record = await ports.embeds.findByDigest(digestSecret(embedToken));
  if (record === null || record.status !== 'active') throw new AuthenticationRequiredError();
  if (!originAllowed(origin, record.allowedDomains)) {
    throw new AccessDeniedError("This site is not allowed to use this embed token: add its domain to the token's allowedDomains.", 'DOMAIN_NOT_ALLOWED');
  }
  return record;
}

/** SPEC 4.10 `GET /embed/config`: what the widget shows, only to a page on an allowed origin. */
export async function embedConfig(embedToken: string, origin: string | undefined, ports: Pick<EmbedPorts, 'embeds'>) {
  const record = await presentedEmbed(embedToken, origin, ports);
  return {
    agentId: record.agentId,
    voiceAgentId: record.voiceAgentId,
    agentName: record.config.agentName,
    greeting: record.config.greeting,
    color: record.config.color,
    position: record.config.position,
    mode: record.config.mode,
    title: record.config.title,
    subtitle: record.config.subtitle,
    logoUrl: record.config.logoUrl,
    initialPrompt: record.config.initialPrompt,
    placeholder: record.config.placeholder,
    size: record.config.size,
    autoOpen: record.config.autoOpen,
    autoOpenDelay: record.config.autoOpenDelay,
  };
}

/**
 * SPEC 4.10 `POST /embed/chat`: a short-lived credential that can chat with (and call) this
 * embed's agents and nothing else, billed to the owner. Counted against the token's daily limits:
 * all visitors together, and each address. The credential names one visitor (one browser), kept
 * across renewals through the visitor token, so visitors cannot continue each other's chats.
 */
export async function startEmbedChat(
  embedToken: string,
  visitor: { origin: string | undefined; ip: string; visitorToken?: string | undefined },
  ports: EmbedPorts,
  urls: PublicUrls,
  ttlSec: number,
) {
  const record = await presentedEmbed(embedToken, visitor.origin, ports);
  assertWithinQuota(record, [...(record.agentId === null ? [] : ['chat' as const]), ...(record.voiceAgentId === null ? [] : ['voice' as const])]);
  await ports.rateLimiter.consume(`embed-day:${record.embedTokenId}`, { limit: record.rateLimitPerDay, windowSec: DAY_SEC });
  await ports.rateLimiter.consume(`embed-ip:${record.embedTokenId}:${visitor.ip}`, { limit: record.rateLimitPerIp, windowSec: DAY_SEC });
  const agents = [record.agentId, record.voiceAgentId].filter((id): id is string => id !== null);
  // A missing, stale or foreign visitor token is no error: that browser starts as a new visitor.
  const known = visitor.visitorToken === undefined ? null : await ports.runTokens.verifyVisitor(visitor.visitorToken, record.embedTokenId);
  const visitorId = known ?? randomBytes(16).toString('base64url');
  const [bearerToken, visitorToken] = await Promise.all([
    ports.runTokens.mint({ userId: record.ownerId, keys: null, agents, embedTokenId: record.embedTokenId, visitorId }, ttlSec * 1000),
    ports.runTokens.mintVisitor(record.embedTokenId, visitorId, VISITOR_TOKEN_TTL_MS),
  ]);
  return {
    agentId: record.agentId,
    voiceAgentId: record.voiceAgentId,
    bearerToken,
    visitorToken,
    streamUrl: record.agentId === null ? null : `${urls.streamUrl}/agent/${record.agentId}/chat`,
    ...(urls.voiceUrl !== undefined && record.voiceAgentId !== null ? { voiceUrl: `${urls.voiceUrl}/ws/${record.voiceAgentId}` } : {}),
    expiresAt: ports.clock.now() + ttlSec * 1000,
  };
}
