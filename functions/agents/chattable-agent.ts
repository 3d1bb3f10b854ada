import { ValidationError } from '../core/errors.ts';
import type { AgentRecord } from './agent.schema.ts';
import type { AgentStore } from './agent.store.ts';

/**
 * The agent, if `ownerId` may have the platform chat with it on their behalf (cron jobs, channels,
 * embeds): theirs or public, not deleted; a 400 naming the request's `field` otherwise, revealing
 * nothing else.
 */
export async function chattableAgent(
  ownerId: string,
  agentId: string,
  ports: { readonly agents: Pick<AgentStore, 'get'> },
  field = 'agentId',
): Promise<AgentRecord> {
  const agent = await ports.agents.get(agentId);
  if (agent === null || agent.status === 'deleted' || (agent.ownerId !== ownerId && agent.visibility !== 'public')) {
    const message = `${field}: agent ${agentId} does not exist or is not one you may chat with`;
    throw new ValidationError(`Invalid request: ${message}.`, [message]);
  }
  return agent;
}
