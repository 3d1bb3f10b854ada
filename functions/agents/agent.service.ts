import type { PublicUrls } from '../core/http/public-urls.ts';
import { requireAlias, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { Page } from '../core/db/cursor.ts';
import { AccessDeniedError, ConflictError, NotFoundError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { Compute } from '../runtimes/compute.ts';
import { syncResource } from '../search/resource-index.ts';
import type { SearchIndex } from '../search/search-index.ts';
import { checkSource, sourceProblems } from '../runtimes/source-check.ts';
import type { UserStore } from '../users/user.store.ts';
import type { AgentRecord, VoiceId } from './agent.schema.ts';
import { MAX_AGENTS_PER_OWNER, type AgentStore } from './agent.store.ts';
import { conversationSummary } from './conversation.schema.ts';
import type { ConversationStore } from './conversation.store.ts';

export interface AgentPorts {
  readonly agents: AgentStore;
  readonly conversations: ConversationStore;
  readonly users: UserStore;
  readonly compute: Compute;
  readonly clock: Clock;
  readonly config: Config;
  readonly searchIndex: SearchIndex;
}

/**
 * How an agent is shown. `sourceCode` only where the spec includes it (get by id or slug), and
 * only when the caller may see it (`maySeeSource`).
 */
export function presentAgent(agent: AgentRecord, ownerAlias: string | null, streamUrl: string, withSource: boolean) {
  const month = new Date().toISOString().slice(0, 7);
  return {
    agentId: agent.agentId,
    agentName: agent.agentName,
    description: agent.description,
    status: agent.status,
    visibility: agent.visibility,
    sourceVisibility: agent.sourceVisibility,
    runtime: agent.runtime,
    memoryMb: agent.memoryMb,
    timeoutSec: agent.timeoutSec,
    agentType: agent.agentType,
    initialPrompt: agent.initialPrompt,
    voice: agent.agentType === 'bidi' ? (agent.voice ?? 'voice_1') : null,
    owner: ownerAlias,
    slug: ownerAlias === null ? null : `${ownerAlias}/${agent.agentName}`,
    invocationsPerMonth: agent.invocationMonth === month ? agent.invocationsThisMonth : 0,
    endpointUrl: `${streamUrl}/agent/${agent.agentId}/chat`,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
    ...(withSource ? { sourceCode: agent.sourceCode } : {}),
  };
}

/** Runs the runtime's static checker; every violation is listed with its line (SPEC part 2). */
export async function checkAgentSource(source: string, agentType: 'text' | 'bidi', ports: Pick<AgentPorts, 'compute'>): Promise<void> {
  await checkSource(ports.compute, source, 'sourceCode', agentType === 'bidi' ? 'create_bidi_agent' : 'create_agent');
}

/**
 * The checker's verdict without saving (`POST /agent/check`): the problems create and update would
 * refuse, each at its line, so an editor can mark them while the source is written.
 */
export async function checkAgentSourceProblems(source: string, agentType: 'text' | 'bidi', ports: Pick<AgentPorts, 'compute'>) {
  const problems = await sourceProblems(ports.compute, source, agentType === 'bidi' ? 'create_bidi_agent' : 'create_agent');
  return { ok: problems.length === 0, problems };
}

/** The agent, or AGENT_NOT_FOUND; deleted agents are found (callers decide what that means). */
export async function loadAgent(agentId: string, ports: Pick<AgentPorts, 'agents'>): Promise<AgentRecord> {
  const agent = await ports.agents.get(agentId);
  if (agent === null) throw new NotFoundError(`Agent ${agentId} not found.`, 'AGENT_NOT_FOUND');
  return agent;
}

/** Owners see their agents in any state; others see active public ones, and get 403 for private ones. */
export function assertCanView(actor: Actor, agent: AgentRecord): void {
  const isOwner = actor.kind === 'user' && actor.userId === agent.ownerId;
  if (isOwner) return;
  if (agent.status === 'deleted') throw new NotFoundError(`Agent ${agent.agentId} not found.`, 'AGENT_NOT_FOUND');
  if (agent.visibility !== 'public') throw new AccessDeniedError(`Agent ${agent.agentId} is private.`);
}

/** The source is shown to the owner always, to others unless the owner set `sourceVisibility` to `hidden`. */
export function maySeeSource(actor: Actor, agent: AgentRecord): boolean {
  return (actor.kind === 'user' && actor.userId === agent.ownerId) || agent.sourceVisibility !== 'hidden';
}

/**
 * Puts the agent in resource search as stored now (active and public), or takes it out: called by
 * every write once the record is final, in the same request, so search never shows a private,
 * deleted or renamed agent after the write answered.
 */
async function indexAgent(agent: AgentRecord, ownerAlias: string | null, ports: Pick<AgentPorts, 'searchIndex'>): Promise<void> {
  await syncResource(
    ports.searchIndex,
    'agent',
    agent.agentId,
    // Without an alias there is no slug to show; owners have one from their first create on.
    agent.visibility === 'public' && agent.status === 'active' && ownerAlias !== null
      ? {
          resourceType: 'agent',
          resourceId: agent.agentId,
          name: agent.agentName,
          description: agent.description,
          slug: `${ownerAlias}/${agent.agentName}`,
          owner: ownerAlias,
          ownerId: agent.ownerId,
        }
      : null,
  );
}

function assertOwner(actor: UserActor, agent: AgentRecord): void {
  if (actor.userId !== agent.ownerId) throw new AccessDeniedError(`Only the owner may change agent ${agent.agentId}.`);
}

export async function createAgent(
  actor: Actor,
  input: {
    agentName: string;
    description: string;
    sourceCode: string;
    visibility: 'private' | 'public';
    sourceVisibility: 'visible' | 'hidden';
    runtime: 'python3.12';
    memoryMb: number;
    timeoutSec: number;
    agentType: 'text' | 'bidi';
    initialPrompt?: string | undefined;
    voice?: VoiceId | undefined;
  },
  ports: AgentPorts,
  urls: PublicUrls,
) {
  const owner = requireAlias(actor);
  await checkAgentSource(input.sourceCode, input.agentType, ports);
  const now = ports.clock.now();
  const agent: AgentRecord = {
    agentId: uuid(),
    ownerId: owner.userId,
    agentName: input.agentName,
    description: input.description,
    sourceCode: input.sourceCode,
    agentType: input.agentType,
    visibility: input.visibility,
    sourceVisibility: input.sourceVisibility,
    status: 'active',
    runtime: input.runtime,
    memoryMb: input.memoryMb,
    timeoutSec: input.timeoutSec,
    initialPrompt: input.initialPrompt ?? null,
    voice: input.agentType === 'bidi' ? (input.voice ?? 'voice_1') : null,
    invocationMonth: null,
    invocationsThisMonth: 0,
    createdAt: now,
    updatedAt: now,
  };
  // The store enforces the per-owner limit with the create itself, so concurrent creates cannot pass it.
  const created = await ports.agents.create(agent);
  if (created === 'limit') throw new ConflictError(`An account may own at most ${MAX_AGENTS_PER_OWNER} agents.`);
  if (created === 'name-taken') throw new ConflictError(`You already have an agent named "${input.agentName}".`);
  await indexAgent(agent, owner.alias, ports);
  return presentAgent(agent, owner.alias, urls.streamUrl, false);
}

/**
 * Listing rules: anonymous callers see active public agents only. Signed-in callers see their own
 * agents for `all` and `private`, and every owner's public agents for `public`; `status=deleted`
 * lists one's own deleted agents.
 *
 * Pages come from DynamoDB a page at a time (`core/db/listing.ts`): `offset` (SPEC 4.1) skips
 * matching agents by reading their keys, and `nextCursor` resumes after the page at no extra cost.
 */
export async function listAgents(
  actor: Actor,
  query: { visibility: 'all' | 'public' | 'private'; status: 'active' | 'deleted'; limit: number; offset: number; cursor?: string | undefined },
  ports: AgentPorts,
  urls: PublicUrls,
) {
  const streamUrl = urls.streamUrl;
  const request = { limit: query.limit, offset: query.offset, cursor: query.cursor };
  let page: Page<AgentRecord>;
  if (actor.kind === 'anonymous' || query.visibility === 'public') {
    page = query.status === 'deleted' ? { items: [], nextCursor: null } : await ports.agents.listPublic(request);
  } else {
    const visibility = query.visibility === 'all' ? undefined : query.visibility;
    page = await ports.agents.listByOwner(actor.userId, { status: query.status, visibility }, request);
  }
  const aliases = await aliasesOf(
    page.items.map((a) => a.ownerId),
    ports,
  );
  const agents = page.items.map((a) => presentAgent(a, aliases.get(a.ownerId) ?? null, streamUrl, false));
  return { agents, count: agents.length, limit: query.limit, offset: query.offset, nextCursor: page.nextCursor };
}

async function aliasesOf(ownerIds: string[], ports: Pick<AgentPorts, 'users'>): Promise<Map<string, string | null>> {
  const unique = [...new Set(ownerIds)];
  const users = await Promise.all(unique.map((id) => ports.users.get(id)));
  return new Map(unique.map((id, i) => [id, users[i]?.alias ?? null]));
}

async function ownerAlias(agent: AgentRecord, ports: Pick<AgentPorts, 'users'>): Promise<string | null> {
  return (await ports.users.get(agent.ownerId))?.alias ?? null;
}

export async function getAgent(actor: Actor, agentId: string, ports: AgentPorts, urls: PublicUrls) {
  const agent = await loadAgent(agentId, ports);
  assertCanView(actor, agent);
  return presentAgent(agent, await ownerAlias(agent, ports), urls.streamUrl, maySeeSource(actor, agent));
}

/** `owner/slug`: the owner's alias and the agent's name. */
export async function getAgentBySlug(actor: Actor, owner: string, slug: string, ports: AgentPorts, urls: PublicUrls) {
  const claim = await ports.users.getAliasClaim(owner);
  const agent = claim === null ? null : await ports.agents.getByName(claim.userId, slug);
  if (agent === null) throw new NotFoundError(`Agent ${owner}/${slug} not found.`, 'AGENT_NOT_FOUND');
  assertCanView(actor, agent);
  return presentAgent(agent, owner, urls.streamUrl, maySeeSource(actor, agent));
}

export async function updateAgent(
  actor: UserActor,
  input: {
    agentId: string;
    agentName?: string | undefined;
    description?: string | undefined;
    sourceCode?: string | undefined;
    visibility?: 'private' | 'public' | undefined;
    sourceVisibility?: 'visible' | 'hidden' | undefined;
    status?: 'active' | 'deleted' | undefined;
    initialPrompt?: string | null | undefined;
    agentType?: 'text' | 'bidi' | undefined;
    voice?: VoiceId | undefined;
    memoryMb?: number | undefined;
    timeoutSec?: number | undefined;
  },
  ports: AgentPorts,
  urls: PublicUrls,
) {
  const agent = await loadAgent(input.agentId, ports);
  assertOwner(actor, agent);
  const agentType = input.agentType ?? agent.agentType;
  // A new source, or a new type the old source must now suit (create_agent or create_bidi_agent).
  if ((input.sourceCode !== undefined && input.sourceCode !== agent.sourceCode) || agentType !== agent.agentType) {
    await checkAgentSource(input.sourceCode ?? agent.sourceCode, agentType, ports);
  }
  const { agentId: _id, ...fields } = input;
  const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<AgentRecord>;
  const updated = await ports.agents.update(agent, changes, ports.clock.now());
  if (updated === 'name-taken') throw new ConflictError(`You already have an agent named "${input.agentName}".`);
  if (updated === 'changed') throw new ConflictError(`Agent ${agent.agentId} changed while updating; retry.`);
  await indexAgent(updated, actor.alias, ports);
  return presentAgent(updated, actor.alias, urls.streamUrl, false);
}

/** Soft delete: the agent stays (its owner can restore it with update status `active`); chat answers 410. */
export async function deleteAgent(actor: UserActor, agentId: string, ports: AgentPorts, urls: PublicUrls) {
  const agent = await loadAgent(agentId, ports);
  assertOwner(actor, agent);
  if (agent.status === 'deleted') return { agentId, status: 'deleted' as const, message: 'Agent already deleted.' };
  const result = await updateAgent(actor, { agentId, status: 'deleted' }, ports, urls);
  return { agentId, status: result.status, message: 'Agent deleted; restore it with an update setting status to active.' };
}

export async function listRecentConversations(actor: UserActor, limit: number, ports: Pick<AgentPorts, 'conversations'>) {
  const conversations = (await ports.conversations.listByUser(actor.userId, limit)).map(conversationSummary);
  return { conversations, count: conversations.length };
}

export async function listAgentConversations(actor: UserActor, agentId: string, limit: number, ports: AgentPorts) {
  const agent = await loadAgent(agentId, ports);
  assertCanView(actor, agent);
  const conversations = (await ports.conversations.listByUserAndAgent(actor.userId, agentId, limit)).map(conversationSummary);
  return { agentId, conversations, count: conversations.length };
}

/** One of the caller's conversations with the agent; anyone else's is reported as not found. */
export async function getConversation(actor: UserActor, agentId: string, conversationId: string, ports: AgentPorts) {
  const conversation = await ports.conversations.get(conversationId);
  if (conversation === null || conversation.userId !== actor.userId || conversation.agentId !== agentId) {
    throw new NotFoundError(`Conversation ${conversationId} not found.`, 'CONVERSATION_NOT_FOUND');
  }
  return {
    conversation: {
      ...conversationSummary(conversation),
      userId: conversation.userId,
      messages: await ports.conversations.messagesOf(conversation),
    },
  };
}
