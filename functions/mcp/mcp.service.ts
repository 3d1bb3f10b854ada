import type { PublicUrls } from '../core/http/public-urls.ts';
import type { PaidAccessStore } from '../billing/billing.store.ts';
import { requireAlias, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { AccessDeniedError, ConflictError, NotFoundError, UpstreamError, ValidationError } from '../core/errors.ts';
import { randomBase62, sha256Hex } from '../core/ids.ts';
import { McpRuntimeUnavailableError } from '../runtimes/mcp-protocol.ts';
import type { McpRuntime } from '../runtimes/mcp-runtime.ts';
import { syncResource } from '../search/resource-index.ts';
import type { SearchIndex } from '../search/search-index.ts';
import type { UserStore } from '../users/user.store.ts';
import { MAX_SERVERS_PER_OWNER, type AuthorPricing, type McpServerRecord, type McpVersion, type McpVersionSummary } from './mcp.schema.ts';
import type { McpServerStore, ServerFieldChanges } from './mcp.store.ts';

export interface McpPorts {
  readonly mcpServers: McpServerStore;
  readonly users: UserStore;
  readonly mcpRuntime: McpRuntime;
  readonly clock: Clock;
  readonly config: Config;
  readonly searchIndex: SearchIndex;
  /** Subscriptions and free trials of paid servers (functions/billing/paid-access.ts). */
  readonly paidAccess?: PaidAccessStore;
}

/** `mcp-` and 20 random base62 characters (about 119 bits). */
export function newServerId(): string {
  return `mcp-${randomBase62(20)}`;
}

/** The MCP endpoint addresses of a server: by id, and by `{owner}/{serverName}` when the owner has an alias. */
export function endpointUrls(mcpUrl: string, server: Pick<McpServerRecord, 'serverId' | 'serverName'>, ownerAlias: string | null) {
  return {
    endpointUrl: `${mcpUrl}/mcp/${server.serverId}`,
    slugEndpointUrl: ownerAlias === null ? null : `${mcpUrl}/mcp/s/${ownerAlias}/${server.serverName}`,
  };
}

/** How a server is shown (envelope B). `sourceCode` is the live version's, when the caller may see it. */
export function presentServer(server: McpServerRecord, ownerAlias: string | null, mcpUrl: string, sourceCode?: string) {
  return {
    serverId: server.serverId,
    serverName: server.serverName,
    description: server.description,
    owner: ownerAlias,
    slug: ownerAlias === null ? null : `${ownerAlias}/${server.serverName}`,
    visibility: server.visibility,
    sourceVisibility: server.sourceVisibility,
    latestVersion: server.latestVersion,
    tools: server.tools,
    sizeBytes: server.sourceSizeBytes,
    authorPricing: server.authorPricing ?? null,
    ...endpointUrls(mcpUrl, server, ownerAlias),
    createdAt: server.createdAt,
    updatedAt: server.updatedAt,
    ...(sourceCode !== undefined ? { sourceCode } : {}),
  };
}

/**
 * Puts the server and the tools of its live version in resource search as stored now (public), or
 * takes them out (`null`: deleted): called by every write once the record is final, in the same
 * request, so search never shows a private or deleted server, or tools the live version lacks.
 */
async function indexServer(serverId: string, server: McpServerRecord | null, ownerAlias: string | null, ports: Pick<McpPorts, 'searchIndex'>): Promise<void> {
  const listed = server !== null && server.visibility === 'public' && ownerAlias !== null;
  await syncResource(
    ports.searchIndex,
    'mcp',
    serverId,
    listed
      ? {
          resourceType: 'mcp',
          resourceId: serverId,
          name: server.serverName,
          description: server.description,
          slug: `${ownerAlias}/${server.serverName}`,
          owner: ownerAlias,
          ownerId: server.ownerId,
          // Versions store tool names only; a tool is found by its name (and its server's words rank the server).
          tools: server.tools.map((name) => ({ name })),
        }
      : null,
  );
}

export function isOwner(actor: Actor, server: McpServerRecord): boolean {
  return actor.kind === 'user' && actor.userId === server.ownerId;
}

/** Owners see their servers; others see public ones and get 403 for private ones (as agents do). */
export function assertCanView(actor: Actor, server: McpServerRecord): void {
  if (isOwner(actor, server) || server.visibility === 'public') return;
  throw new AccessDeniedError(`MCP server ${server.serverId} is private.`);
}

function assertOwner(actor: UserActor, server: McpServerRecord, what: string): void {
  if (actor.userId !== server.ownerId) throw new AccessDeniedError(`Only the owner may ${what} MCP server ${server.serverId}.`);
}

/** The source is shown to the owner always, to others unless the owner set `sourceVisibility` to `hidden`. */
export function maySeeSource(actor: Actor, server: McpServerRecord): boolean {
  return isOwner(actor, server) || server.sourceVisibility !== 'hidden';
}

export async function loadServer(serverId: string, ports: Pick<McpPorts, 'mcpServers'>): Promise<McpServerRecord> {
  const server = await ports.mcpServers.get(serverId);
  if (server === null) throw new NotFoundError(`MCP server ${serverId} not found.`);
  return server;
}

/** `{owner}/{slug}`: the owner's alias and the server's name. */
export async function loadServerBySlug(owner: string, slug: string, ports: Pick<McpPorts, 'mcpServers' | 'users'>): Promise<McpServerRecord> {
  const claim = await ports.users.getAliasClaim(owner);
  const server = claim === null ? null : await ports.mcpServers.getByName(claim.userId, slug);
  if (server === null) throw new NotFoundError(`MCP server ${owner}/${slug} not found.`);
  return server;
}

/** One version of a server, or 404 naming it. */
export async function loadVersion(server: McpServerRecord, version: number, ports: Pick<McpPorts, 'mcpServers'>): Promise<McpVersion> {
  const found = await ports.mcpServers.getVersion(server.serverId, version);
  if (found === null) throw new NotFoundError(`Version ${version} of MCP server ${server.serverId} not found.`);
  return found;
}

/**
 * Loads the source in the owner's runtime and lists its tools. A source that does not load, has no
 * `createMcpServer`, or throws while building is a 400 with the runtime's error text. The probe's
 * id is derived from the source (the runtime caches built servers per id and version), so two
 * inspections share a cache entry only when their sources are identical. A runtime that cannot be
 * reached at all (not the source's fault) is a 502 and nothing is written.
 */
export async function inspectSource(ownerId: string, sourceCode: string, ports: Pick<McpPorts, 'mcpRuntime'>): Promise<string[]> {
  let inspection;
  try {
    inspection = await ports.mcpRuntime.inspect(ownerId, { serverId: `inspect-${sha256Hex(sourceCode).slice(0, 40)}`, version: 0, sourceCode });
  } catch (error) {
    if (error instanceof McpRuntimeUnavailableError)
      throw new UpstreamError('The MCP runtime is unavailable right now; nothing was saved. Retry shortly.', 'MCP_RUNTIME_UNAVAILABLE');
    throw error;
  }
  if (!inspection.ok) throw new ValidationError('Invalid request body', [`sourceCode: the MCP server does not load: ${inspection.error}`]);
  return [...inspection.tools];
}

async function aliasOf(ownerId: string, ports: Pick<McpPorts, 'users'>): Promise<string | null> {
  return (await ports.users.get(ownerId))?.alias ?? null;
}

export async function createServer(
  actor: Actor,
  input: {
    serverName: string;
    description: string;
    sourceCode: string;
    visibility: 'private' | 'public';
    sourceVisibility: 'visible' | 'hidden';
    authorPricing?: AuthorPricing | null | undefined;
    changeNote?: string | undefined;
  },
  ports: McpPorts,
  urls: PublicUrls,
) {
  const owner = requireAlias(actor);
  const taken = () => new ConflictError(`You already have an MCP server named "${input.serverName}".`);
  const atLimit = () => new ConflictError(`An account may own at most ${MAX_SERVERS_PER_OWNER} MCP servers.`);
  // Cheap refusals before the source is loaded; the name claim and the owner's counter in `create` settle races.
  if ((await ports.mcpServers.getByName(owner.userId, input.serverName)) !== null) throw taken();
  if ((await ports.mcpServers.countByOwner(owner.userId)) >= MAX_SERVERS_PER_OWNER) throw atLimit();
  const tools = await inspectSource(owner.userId, input.sourceCode, ports);
  const now = ports.clock.now();
  const draft: McpServerRecord = {
    serverId: newServerId(),
    ownerId: owner.userId,
    serverName: input.serverName,
    description: input.description,
    visibility: input.visibility,
    sourceVisibility: input.sourceVisibility,
    authorPricing: input.authorPricing ?? null,
    latestVersion: 1,
    tools,
    sourceSha256: '',
    sourceSizeBytes: 0,
    createdAt: now,
    updatedAt: now,
  };
  const created = await ports.mcpServers.create(draft, {
    createdAt: now,
    createdBy: owner.userId,
    changeNote: input.changeNote ?? 'Initial version',
    rollbackOf: null,
    tools,
    sourceCode: input.sourceCode,
  });
  if (created === 'limit') throw atLimit();
  if (created === 'name-taken') throw taken();
  const server = await loadServer(draft.serverId, ports);
  await indexServer(server.serverId, server, owner.alias, ports);
  return { ...presentServer(server, owner.alias, urls.mcpUrl), version: 1 };
}

/**
 * Listing rules (as for agents): anonymous callers see public servers only. Signed-in callers see
 * their own servers for `all` and `private`, and every owner's public servers for `public`. Pages
 * come from DynamoDB a page at a time; `nextCursor` (a platform extra to SPEC 4.4) resumes after one.
 */
export async function listServers(
  actor: Actor,
  query: { visibility: 'all' | 'public' | 'private'; limit: number; cursor?: string | undefined },
  ports: McpPorts,
  urls: PublicUrls,
) {
  const request = { limit: query.limit, cursor: query.cursor };
  const page =
    actor.kind === 'anonymous' || query.visibility === 'public'
      ? await ports.mcpServers.listPublic(request)
      : await ports.mcpServers.listByOwner(actor.userId, { visibility: query.visibility === 'all' ? undefined : query.visibility }, request);
  const unique = [...new Set(page.items.map((s) => s.ownerId))];
  const aliases = new Map(await Promise.all(unique.map(async (id) => [id, await aliasOf(id, ports)] as const)));
  const mcpUrl = urls.mcpUrl;
  const servers = page.items.map((s) => presentServer(s, aliases.get(s.ownerId) ?? null, mcpUrl));
  return { servers, count: servers.length, limit: query.limit, nextCursor: page.nextCursor };
}

/** The record as readers see it: repaired if a version was written but not made live (see the store). */
async function viewable(actor: Actor, server: McpServerRecord, ports: McpPorts, ownerAlias: string | null, urls: PublicUrls) {
  assertCanView(actor, server);
  const current = await ports.mcpServers.repair(server);
  const source = maySeeSource(actor, current) ? (await loadVersion(current, current.latestVersion, ports)).sourceCode : undefined;
  return presentServer(current, ownerAlias, urls.mcpUrl, source);
}

export async function getServer(actor: Actor, serverId: string, ports: McpPorts, urls: PublicUrls) {
  const server = await loadServer(serverId, ports);
  return viewable(actor, server, ports, await aliasOf(server.ownerId, ports), urls);
}

export async function getServerBySlug(actor: Actor, owner: string, slug: string, ports: McpPorts, urls: PublicUrls) {
  const server = await loadServerBySlug(owner, slug, ports);
  return viewable(actor, server, ports, owner, urls);
}

/**
 * Changes a server. An update carrying `sourceCode` loads it (400 if it does not load) and writes
 * version latest+1 with `changeNote` (SPEC part 9: every sourceCode update creates a version, even
 * one whose source equals the live one); the other fields change in place. Only supplied fields change.
 */
export async function updateServer(
  actor: UserActor,
  input: {
    serverId: string;
    description?: string | undefined;
    sourceCode?: string | undefined;
    changeNote?: string | undefined;
    visibility?: 'private' | 'public' | undefined;
    sourceVisibility?: 'visible' | 'hidden' | undefined;
    authorPricing?: AuthorPricing | null | undefined;
  },
  ports: McpPorts,
  urls: PublicUrls,
) {
  const server = await loadServer(input.serverId, ports);
  assertOwner(actor, server, 'update');
  const changes: ServerFieldChanges = Object.fromEntries(
    Object.entries({
      description: input.description,
      visibility: input.visibility,
      sourceVisibility: input.sourceVisibility,
      authorPricing: input.authorPricing,
    }).filter(([, v]) => v !== undefined),
  );
  if (input.sourceCode === undefined && input.changeNote !== undefined) {
    throw new ValidationError('Invalid request body', ['changeNote: annotates a new version, so it needs sourceCode']);
  }
  if (input.sourceCode === undefined && Object.keys(changes).length === 0) {
    throw new ValidationError('Invalid request body', [
      'request body: give at least one of description, sourceCode, visibility, sourceVisibility, authorPricing',
    ]);
  }

  let version: number | null = null;
  let current: McpServerRecord | null = server;
  if (input.sourceCode !== undefined) {
    const tools = await inspectSource(server.ownerId, input.sourceCode, ports);
    const written = await ports.mcpServers.appendVersion(server.serverId, {
      createdAt: ports.clock.now(),
      createdBy: actor.userId,
      changeNote: input.changeNote ?? '',
      rollbackOf: null,
      tools,
      sourceCode: input.sourceCode,
    });
    version = written.version;
    current = written.server;
  }
  if (current !== null && Object.keys(changes).length > 0) current = await ports.mcpServers.updateFields(server.serverId, changes, ports.clock.now());
  if (current === null) throw new NotFoundError(`MCP server ${server.serverId} not found.`);
  await indexServer(current.serverId, current, actor.alias, ports);
  return { ...presentServer(current, actor.alias, urls.mcpUrl), version };
}

/** Removes the server, its name (free to use again) and its whole version history. */
export async function deleteServer(actor: UserActor, serverId: string, ports: McpPorts) {
  const server = await loadServer(serverId, ports);
  assertOwner(actor, server, 'delete');
  if ((await ports.mcpServers.delete(server)) === 'busy') throw new ConflictError(`MCP server ${serverId} is being changed right now; retry.`);
  await indexServer(serverId, null, actor.alias, ports);
  return { serverId, serverName: server.serverName, deleted: true, message: 'MCP server and its version history deleted.' };
}

function presentSummary(v: McpVersionSummary) {
  return {
    version: v.version,
    createdAt: v.createdAt,
    createdBy: v.createdBy,
    sizeBytes: v.sizeBytes,
    changeNote: v.changeNote,
    rollbackOf: v.rollbackOf,
    tools: v.tools,
  };
}

/** SPEC 4.4: `{serverId, latestVersion, versions (newest first, without source), count}`. */
export async function listVersions(actor: Actor, serverId: string, limit: number, ports: McpPorts) {
  const server = await loadServer(serverId, ports);
  assertCanView(actor, server);
  const current = await ports.mcpServers.repair(server);
  const versions = (await ports.mcpServers.listVersions(serverId, limit)).map(presentSummary);
  return { serverId, latestVersion: Math.max(current.latestVersion, versions[0]?.version ?? 0), versions, count: versions.length };
}

/** The full snapshot; `sourceCode` omitted for non-owners when the source is hidden. */
export async function getVersion(actor: Actor, serverId: string, version: number, ports: McpPorts) {
  const server = await loadServer(serverId, ports);
  assertCanView(actor, server);
  const found = await loadVersion(server, version, ports);
  return { serverId, ...presentSummary(found), ...(maySeeSource(actor, server) ? { sourceCode: found.sourceCode } : {}) };
}

/**
 * Owner only (SPEC part 5, item 9). Writes version latest+1 with the target's source and tools and
 * `rollbackOf` set, and makes it live; nothing earlier is changed.
 */
export async function rollbackServer(actor: UserActor, serverId: string, input: { targetVersion: number; changeNote?: string | undefined }, ports: McpPorts) {
  const server = await loadServer(serverId, ports);
  assertOwner(actor, server, 'roll back');
  const target = await loadVersion(server, input.targetVersion, ports);
  const written = await ports.mcpServers.appendVersion(serverId, {
    createdAt: ports.clock.now(),
    createdBy: actor.userId,
    changeNote: input.changeNote ?? `Rollback to version ${target.version}`,
    rollbackOf: target.version,
    tools: target.tools,
    sourceCode: target.sourceCode,
  });
  if (written.server === null) throw new NotFoundError(`MCP server ${serverId} not found.`);
  await indexServer(serverId, written.server, actor.alias, ports);
  return {
    serverId,
    rolledBackTo: target.version,
    version: written.version,
    latestVersion: Math.max(written.version, written.server.latestVersion),
    tools: target.tools,
  };
}
