import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, type Db, queryItems } from '../core/db/dynamo.ts';
import type { AgentRecord } from './agent.schema.ts';

/**
 * Agents by id, with the name unique per owner: `agent-names` is keyed by `{ownerId}#{agentName}`
 * and written before the agent (a claim whose agent is missing or renamed is stale and may be taken).
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
  const names = db.table('agent-names');
  const nameKey = (ownerId: string, agentName: string) => `${ownerId}#${agentName}`;

  const get = async (agentId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: agents, Key: { agentId }, ConsistentRead: true }));
    return out.Item === undefined ? null : fromItem(out.Item);
  };

  /** Claims a name for `agentId`; takes over a claim whose agent no longer carries that name. */
  async function claimName(ownerId: string, agentName: string, agentId: string): Promise<boolean> {
    const Key = { nameKey: nameKey(ownerId, agentName) };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await db.doc.send(new PutCommand({ TableName: names, Item: { ...Key, agentId }, ConditionExpression: 'attribute_not_exists(nameKey) OR agentId = :id', ExpressionAttributeValues: { ':id': agentId } }));
        return true;
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
      const claim = await db.doc.send(new GetCommand({ TableName: names, Key, ConsistentRead: true }));
      const holderId = claim.Item?.['agentId'] as string | undefined;
      if (holderId === undefined) continue;
      const holder = await get(holderId);
      if (holder !== null && holder.ownerId === ownerId && holder.agentName === agentName) return false;
      await releaseName(ownerId, agentName, holderId);
    }
    return false;
  }

  async function releaseName(ownerId: string, agentName: string, agentId: string): Promise<void> {
    try {
      await db.doc.send(new DeleteCommand({ TableName: names, Key: { nameKey: nameKey(ownerId, agentName) }, ConditionExpression: 'agentId = :id', ExpressionAttributeValues: { ':id': agentId } }));
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }

  return {
    get,
    async getByName(ownerId, agentName) {
      const claim = await db.doc.send(new GetCommand({ TableName: names, Key: { nameKey: nameKey(ownerId, agentName) }, ConsistentRead: true }));
      const agentId = claim.Item?.['agentId'] as string | undefined;
      if (agentId === undefined) return null;
      const agent = await get(agentId);
      return agent !== null && agent.ownerId === ownerId && agent.agentName === agentName ? agent : null;
    },
    async create(agent) {
      if (!(await claimName(agent.ownerId, agent.agentName, agent.agentId))) return false;
      await db.doc.send(new PutCommand({ TableName: agents, Item: withListing(agent), ConditionExpression: 'attribute_not_exists(agentId)' }));
      return true;
    },
    async update(current, changes, now) {
      const renamed = changes.agentName !== undefined && changes.agentName !== current.agentName;
      if (renamed && !(await claimName(current.ownerId, changes.agentName!, current.agentId))) return 'name-taken';
      const item = withListing({ ...current, ...changes, updatedAt: now });
      try {
        await db.doc.send(
          new PutCommand({ TableName: agents, Item: item, ConditionExpression: 'updatedAt = :expected', ExpressionAttributeValues: { ':expected': current.updatedAt } }),
        );
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
        if (renamed) await releaseName(current.ownerId, changes.agentName!, current.agentId);
        return 'changed';
      }
      if (renamed) await releaseName(current.ownerId, current.agentName, current.agentId);
      return item;
    },
    async listByOwner(ownerId) {
      const items = await queryItems<Record<string, unknown>>(
        db,
        { TableName: agents, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId }, ScanIndexForward: false },
        MAX_AGENTS_PER_OWNER,
      );
      return items.map(fromItem);
    },
    async listPublic(limit, offset) {
      const items = await queryItems<Record<string, unknown>>(
        db,
        { TableName: agents, IndexName: 'publicAgents', KeyConditionExpression: 'publicListing = :p', ExpressionAttributeValues: { ':p': 'public' }, ScanIndexForward: false },
        offset + limit,
      );
      return items.slice(offset, offset + limit).map(fromItem);
    },
    async countInvocation(agentId, month) {
      // Same month: add one. A new month: start the counter again. Each is one conditional update.
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          await db.doc.send(
            new UpdateCommand({ TableName: agents, Key: { agentId }, UpdateExpression: 'ADD invocationsThisMonth :one', ConditionExpression: 'invocationMonth = :m', ExpressionAttributeValues: { ':one': 1, ':m': month } }),
          );
          return;
        } catch (error) {
          if (!isConditionFailed(error)) throw error;
        }
        try {
          await db.doc.send(
            new UpdateCommand({
              TableName: agents,
              Key: { agentId },
              UpdateExpression: 'SET invocationMonth = :m, invocationsThisMonth = :one',
              ConditionExpression: 'attribute_exists(agentId) AND (attribute_not_exists(invocationMonth) OR invocationMonth <> :m)',
              ExpressionAttributeValues: { ':one': 1, ':m': month },
            }),
          );
          return;
        } catch (error) {
          if (!isConditionFailed(error)) throw error;
        }
      }
    },
  };
}
