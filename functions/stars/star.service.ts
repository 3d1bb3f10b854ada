import { requireUser, type Actor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { NotFoundError } from '../core/errors.ts';
import type { AgentStore } from '../agents/agent.store.ts';
import type { McpServerStore } from '../mcp/mcp.store.ts';
import type { SkillStore } from '../skills/skill.store.ts';
import type { UserStore } from '../users/user.store.ts';
import type { StarResourceType } from './star.schema.ts';
import type { StarStore } from './star.store.ts';

export interface StarPorts {
  readonly stars: StarStore;
  readonly agents: AgentStore;
  readonly mcpServers: McpServerStore;
  readonly skills: SkillStore;
  readonly users: UserStore;
  readonly clock: Clock;
}

/** A resource a caller may see, as a star listing names it. */
interface VisibleResource {
  readonly name: string;
  readonly description: string;
  readonly ownerId: string;
}

/**
 * The resource as `actor` may see it, or null: missing, deleted (agents are soft-deleted), or
 * another user's private one. The same rules as each area's own reads.
 */
async function visibleResource(actor: Actor, type: StarResourceType, resourceId: string, ports: StarPorts): Promise<VisibleResource | null> {
  const mayView = (r: { ownerId: string; visibility: string }) => r.visibility === 'public' || (actor.kind === 'user' && actor.userId === r.ownerId);
  if (type === 'agent') {
    const agent = await ports.agents.get(resourceId);
    return agent !== null && agent.status === 'active' && mayView(agent)
      ? { name: agent.agentName, description: agent.description, ownerId: agent.ownerId }
      : null;
  }
  if (type === 'mcp') {
    const server = await ports.mcpServers.get(resourceId);
    return server !== null && mayView(server) ? { name: server.serverName, description: server.description, ownerId: server.ownerId } : null;
  }
  const skill = await ports.skills.get(resourceId);
  return skill !== null && mayView(skill) ? { name: skill.skillName, description: skill.description, ownerId: skill.ownerId } : null;
}

/** `POST /stars`: stars what the caller may see (404 otherwise); starring twice counts once. */
export async function starResource(actor: Actor, input: { resourceId: string; resourceType: StarResourceType }, ports: StarPorts) {
  const user = requireUser(actor);
  if ((await visibleResource(user, input.resourceType, input.resourceId, ports)) === null) {
    throw new NotFoundError(`No ${input.resourceType} ${input.resourceId} that you may see.`);
  }
  const added = await ports.stars.star({ resourceId: input.resourceId, userId: user.userId, resourceType: input.resourceType, starredAt: ports.clock.now() });
  return { resourceId: input.resourceId, resourceType: input.resourceType, starred: true as const, added, count: await ports.stars.count(input.resourceId) };
}

/**
 * `DELETE /stars`: removes the caller's star; a resource never starred is no change. No visibility
 * check, so a star on a resource since deleted or made private can still be taken back.
 */
export async function unstarResource(actor: Actor, input: { resourceId: string; resourceType: StarResourceType }, ports: StarPorts) {
  const user = requireUser(actor);
  const removed = await ports.stars.unstar(input.resourceId, user.userId);
  return { resourceId: input.resourceId, resourceType: input.resourceType, starred: false as const, removed, count: await ports.stars.count(input.resourceId) };
}

/**
 * `GET /stars`: the caller's stars, newest first, with each resource's name. Names are read at
 * listing time, so a resource deleted or made private since (by someone else) drops out of the
 * listing; a page may therefore hold fewer than `limit` stars while `nextCursor` still goes on.
 */
export async function listStars(actor: Actor, query: { limit: number; cursor?: string | undefined }, ports: StarPorts) {
  const user = requireUser(actor);
  const page = await ports.stars.listByUser(user.userId, { limit: query.limit, cursor: query.cursor });
  const resolved = await Promise.all(
    page.items.map(async (star) => ({ star, resource: await visibleResource(user, star.resourceType, star.resourceId, ports) })),
  );
  const visible = resolved.filter((r): r is { star: (typeof r)['star']; resource: VisibleResource } => r.resource !== null);
  const owners = await ports.users.getMany(visible.map((r) => r.resource.ownerId));
  const stars = visible.map(({ star, resource }) => {
    const alias = owners.get(resource.ownerId)?.alias ?? null;
    return {
      resourceId: star.resourceId,
      resourceType: star.resourceType,
      name: resource.name,
      description: resource.description,
      owner: alias,
      slug: alias === null ? null : `${alias}/${resource.name}`,
      starredAt: star.starredAt,
    };
  });
  return { stars, count: stars.length, nextCursor: page.nextCursor };
}

/** `GET /stars/check`: whether the caller starred the resource. */
export async function checkStar(actor: Actor, resourceId: string, ports: StarPorts) {
  const user = requireUser(actor);
  return { resourceId, starred: (await ports.stars.get(resourceId, user.userId)) !== null };
}

/** `GET /stars/count/{resourceId}` (public): how many users starred it; 0 for anything never starred. */
export async function countStars(resourceId: string, ports: StarPorts) {
  return { resourceId, count: await ports.stars.count(resourceId) };
}
