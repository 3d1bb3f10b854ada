import type { AgentRunResult } from '../agents/agent-runs.ts';
import { ExecutionFailedError, UpstreamError, type PlatformError } from '../core/errors.ts';
import { childLineageHeader } from '../core/http/lineage.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { Ports } from '../ports.ts';
import type { ChannelRecord } from './channel.schema.ts';

/**
 * Runs the channel's agent on `text` in the conversation of `conversationKey` (a sender, a thread,
 * or the owner's tests) through the `agentRuns` port, as cron runs do: the chat service runs it as
 * the owner, scoped to this agent, bills the owner, stores the conversation and records the run as
 * a child of `scope`'s request. No credential is minted and the platform's chat endpoint is not
 * called, so channel traffic is limited by the channel's own limits (inbound.service.ts), never by
 * the owner's interactive chat limit. A conversation that is gone starts anew.
 */
export async function chatOnChannel(
  channel: ChannelRecord,
  conversationKey: string,
  text: string,
  scope: Omit<RequestScope, 'actor'>,
  ports: Pick<Ports, 'channels' | 'agentRuns'>,
): Promise<{ reply: string; conversationId: string }> {
  const sender = await ports.channels.getSender(channel.channelId, conversationKey);
  const known = sender?.conversationId;
  const run = (conversationId: string | undefined) =>
    ports.agentRuns.run(
      {
        ownerId: channel.ownerId,
        agentId: channel.agentId,
        prompt: text,
        lineage: childLineageHeader(scope.lineage),
        baseUrl: scope.urls.baseUrl,
        ...(conversationId === undefined ? {} : { conversationId }),
      },
      scope.signal,
    );
  let answer = await run(known);
  if (!answer.ok && answer.code === 'CONVERSATION_NOT_FOUND' && known !== undefined) answer = await run(undefined);
  if (!answer.ok) throw failureOf(answer);
  if (answer.conversationId !== known) await ports.channels.updateSender(channel.channelId, conversationKey, { conversationId: answer.conversationId });
  return { reply: answer.reply, conversationId: answer.conversationId };
}

/**
 * A failed run as the channel's callers throw it, with the run's code and message: the agent's own
 * failure (it raised, or ran out of time) is an execution failure (500); anything that kept it from
 * answering (the owner's credits, a deleted agent, the platform) is the agent's failure as seen from
 * the channel (502), never the owner's status (a 402 or 404 would tell a sender about the owner).
 */
function failureOf(answer: Extract<AgentRunResult, { ok: false }>): PlatformError {
  if (answer.code === 'INTERNAL_ERROR') return new UpstreamError(answer.message, 'CHANNEL_AGENT_FAILED');
  if (answer.status === 500 || answer.status === 504) return new ExecutionFailedError(answer.message, answer.code);
  return new UpstreamError(answer.message, answer.code);
}
