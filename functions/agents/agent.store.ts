import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { systemClock } from '../core/clock.ts';
import type { Page } from '../core/db/cursor.ts';
import { countItems, type Db, writeIf } from '../core/db/dynamo.ts';
import { listPage, type IndexListing, type PageRequest } from '../core/db/listing.ts';
import { putIfUnchanged } from '../core/db/optimistic-update.ts';
import { createOwnerCounts } from '../core/db/owner-count.ts';
import { createUniqueClaims } from '../core/db/unique-claim.ts';
import type { AgentRecord, AgentStatus } from './agent.schema.ts';

/**
 * Agents by id, with the name unique per owner: `agent-names` is keyed by `{ownerId}#{agentName}`
 * and claimed before the agent is written, by the protocol of `core/db/unique-claim.ts`. An owner's
 * place count (`agent-counts`, `core/db/owner-count.ts`) is taken before both, so the per-owner
 * limit costs one item, not a read of the owner's agents. Listings are pages of the `byOwner` and
 * `publicAgents` indexes (`core/db/listing.ts`).
 */
export interface AgentStore {
  get(agentId: string): Promise<AgentRecord | null>;
  getByName(ownerId: string, agentName: string): Promise<AgentRecord | null>;
  /**
   * Writes a new agent: 'name-taken' when the owner already has one with that name, 'limit' when
   * they hold MAX_AGENTS_PER_OWNER (deleted agents count: they can be restored).
   */
  create(agent: AgentRecord): Promise<'created' | 'name-taken' | 'limit'>;
  /**
   * Writes `changes` if the agent still has `expectedUpdatedAt`; a new name is claimed first and the
   * old one released after. 'name-taken' and 'changed' report the two conflicts.
   */
  update(current: AgentRecord, changes: Partial<AgentRecord>, now: number): Promise<AgentRecord | 'name-taken' | 'changed'>;
  /** A page of an owner's agents in one status, newest first, optionally of one visibility. */
  listByOwner(ownerId: string, filter: { status: AgentStatus; visibility?: 'private' | 'public' | undefined }, page: PageRequest): Promise<Page<AgentRecord>>;
  /** A page of the active public agents, newest first. */
  listPublic(page: PageRequest): Promise<Page<AgentRecord>>;
  /** How many agents the owner holds, deleted ones included (one read of their counter). */
  countByOwner(ownerId: string): Promise<number>;
  /** Counts one invocation in the agent's current-month counter. */
  countInvocation(agentId: string, month: string): Promise<void>;
}

export const MAX_AGENTS_PER_OWNER = 500;

/** Sets or clears the sparse `publicListing` key so the public index holds exactly the active public agents. */
function withListing(agent: AgentRecord): AgentRecord {
  const { publicListing: _previous, ...rest } = agent;
  return agent.visibility === 'public' && agent.status === 'active' ? { ...rest, publicListing: 'public' } : rest;
}

/** Agents stored before `sourceVisibility` existed have none: their source was shown, so they read as `visible`. */
function fromItem(item: Record<string, unknown>): AgentRecord {
  return { sourceVisibility: 'visible', ...item } as AgentRecord;
}

export function createAgentStore(db: Db): AgentStore {
  const agents = db.table('agents');
  const nameKey = (ownerId: string, agentName: string) => `${ownerId}#${agentName}`;

  const get = async (agentId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: agents, Key: { agentId }, ConsistentRead: true }));
    return out.Item === undefined ? null : fromItem(out.Item);
  };

  // Deleted agents keep carrying their name (they can be restored), so their claims stay in use.
  const names = createUniqueClaims(db, {
    table: db.table('agent-names'),
    keyAttribute: 'nameKey',
    holderAttribute: 'agentId',
    readHolder: get,
    keyOf: (a) => nameKey(a.ownerId, a.agentName),
  });
  // Deleted agents stay the owner's (they can be restored), so they keep their place too.
  const counts = createOwnerCounts(db, {
    table: db.table('agent-counts'),
    max: MAX_AGENTS_PER_OWNER,
    holds: async (ownerId, agentId) => (await get(agentId))?.ownerId === ownerId,
    countHeld: (ownerId) =>
      countItems(db, { TableName: agents, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId } }),
  });
  const listing = (index: 'byOwner' | 'publicAgents', partitionKey: string, partitionValue: string, filter?: IndexListing['filter']): IndexListing => ({
    table: agents,
    index,
    partitionKey,
    partitionValue,
    sortKey: 'createdAt',
    itemKey: 'agentId',
    newestFirst: true,
    filter,
  });
  const pageOf = async (list: IndexListing, page: PageRequest): Promise<Page<AgentRecord>> => {
    const read = await listPage<Record<string, unknown>>(db, list, page.limit, page.cursor, page.offset);
    return { items: read.items.map(fromItem), nextCursor: read.nextCursor };
  };
  // This factory takes no clock; claim ages only compare claim times with each other, all from the system clock.
  const claimOf = (agent: Pick<AgentRecord, 'ownerId' | 'agentName' | 'agentId'>) => ({
    key: nameKey(agent.ownerId, agent.agentName),
    holderId: agent.agentId,
    claimedAt: systemClock.now(),
  });

  return {
    get,
    getByName: (ownerId, agentName) => names.holderOf(nameKey(ownerId, agentName)),
    async create(agent) {
      // The place first (a refusal at the limit costs no name claim), then the name, then the record.
      const created = await counts.add(agent.ownerId, agent.agentId, async () => {
        const claimed = await names.claimFor(claimOf(agent), async () => {
          await db.doc.send(new PutCommand({ TableName: agents, Item: withListing(agent), ConditionExpression: 'attribute_not_exists(agentId)' }));
          return true as const;
        });
        return claimed === true;
      });
      if (created === true) return 'created';
      // 'busy' would need another operation on this new random id: taken for a name conflict, as a false is.
      return created === 'limit' ? 'limit' : 'name-taken';
    },
    async update(current, changes, now) {
      const item = withListing({ ...current, ...changes, updatedAt: now });
      const write = async () => (await putIfUnchanged(db, agents, item, current.updatedAt)) ?? false;
      const renamed = changes.agentName !== undefined && changes.agentName !== current.agentName;
      const written = renamed ? await names.move(nameKey(current.ownerId, current.agentName), claimOf(item), write) : await write();
      if (written === 'taken') return 'name-taken';
      return written === false ? 'changed' : written;
    },
    listByOwner(ownerId, filter, page) {
      const visibility = filter.visibility === undefined ? '' : ' AND #visibility = :visibility';
      return pageOf(
        listing('byOwner', 'ownerId', ownerId, {
          expression: `#status = :status${visibility}`,
          names: { '#status': 'status', ...(filter.visibility === undefined ? {} : { '#visibility': 'visibility' }) },
          values: { ':status': filter.status, ...(filter.visibility === undefined ? {} : { ':visibility': filter.visibility }) },
        }),
        page,
      );
    },
    // The sparse index holds exactly the active public agents, so its pages need no filter.
    listPublic: (page) => pageOf(listing('publicAgents', 'publicListing', 'public'), page),
    countByOwner: (ownerId) => counts.count(ownerId),
    async countInvocation(agentId, month) {
      // Same month: add one. A new month: start the counter again. Each is one conditional update.
      for (let attempt = 0; attempt < 3; attempt++) {
        const counted = await writeIf(
          db.doc.send(
            new UpdateCommand({
              TableName: agents,
              Key: { agentId },
              UpdateExpression: 'ADD invocationsThisMonth :one',
              ConditionExpression: 'invocationMonth = :m',
              ExpressionAttributeValues: { ':one': 1, ':m': month },
            }),
          ),
        );
        if (counted) return;
        const restarted = await writeIf(
          db.doc.send(
            new UpdateCommand({
              TableName: agents,
              Key: { agentId },
              UpdateExpression: 'SET invocationMonth = :m, invocationsThisMonth = :one',
              ConditionExpression: 'attribute_exists(agentId) AND (attribute_not_exists(invocationMonth) OR invocationMonth <> :m)',
              ExpressionAttributeValues: { ':one': 1, ':m': month },
            }),
          ),
        );
        if (restarted) return;
      }
    },
  };
}
