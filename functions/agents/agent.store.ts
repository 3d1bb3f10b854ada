import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { systemClock } from '../core/clock.ts';
import { type Db, queryItems, writeIf } from '../core/db/dynamo.ts';
import { putIfUnchanged } from '../core/db/optimistic-update.ts';
import { createUniqueClaims } from '../core/db/unique-claim.ts';
import type { AgentRecord } from './agent.schema.ts';

/**
 * Agents by id, with the name unique per owner: `agent-names` is keyed by `{ownerId}#{agentName}`
 * and claimed before the agent is written, by the protocol of `core/db/unique-claim.ts`.
 */
export interface AgentStore {
  get(agentId: string): Promise<AgentRecord | null>;
  getByName(ownerId: string, agentName: string): Promise<AgentRecord | null>;
  /** False when the owner already has an agent with that name. */
  create(agent: AgentRecord): Promise<boolean>;
  /**
   * Writes `changes` if the agent still has `expectedUpdatedAt`; a new name is claimed first and the
   * old one released after. 'name-taken' and 'changed' report the two conflicts.
   */
  update(current: AgentRecord, changes: Partial<AgentRecord>, now: number): Promise<AgentRecord | 'name-taken' | 'changed'>;
  /** Every agent of an owner, newest first (owners hold at most MAX_AGENTS_PER_OWNER). */
  listByOwner(ownerId: string): Promise<AgentRecord[]>;
  /** Active public agents, newest first. */
  listPublic(limit: number, offset: number): Promise<AgentRecord[]>;
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
      const created = await names.claimFor(claimOf(agent), async () => {
        await db.doc.send(new PutCommand({ TableName: agents, Item: withListing(agent), ConditionExpression: 'attribute_not_exists(agentId)' }));
        return true;
      });
      return created === true;
    },
    async update(current, changes, now) {
      const item = withListing({ ...current, ...changes, updatedAt: now });
      const write = async () => (await putIfUnchanged(db, agents, item, current.updatedAt)) ?? false;
      const renamed = changes.agentName !== undefined && changes.agentName !== current.agentName;
      const written = renamed ? await names.move(nameKey(current.ownerId, current.agentName), claimOf(item), write) : await write();
      if (written === 'taken') return 'name-taken';
      return written === false ? 'changed' : written;
    },
    async listByOwner(ownerId) {
      const items = await queryItems<Record<string, unknown>>(
        db,
        {
          TableName: agents,
          IndexName: 'byOwner',
          KeyConditionExpression: 'ownerId = :o',
          ExpressionAttributeValues: { ':o': ownerId },
          ScanIndexForward: false,
        },
        MAX_AGENTS_PER_OWNER,
      );
      return items.map(fromItem);
    },
    async listPublic(limit, offset) {
      const items = await queryItems<Record<string, unknown>>(
        db,
        {
          TableName: agents,
          IndexName: 'publicAgents',
          KeyConditionExpression: 'publicListing = :p',
          ExpressionAttributeValues: { ':p': 'public' },
          ScanIndexForward: false,
        },
        offset + limit,
      );
      return items.slice(offset, offset + limit).map(fromItem);
    },
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
