import { errorMessageOf, outcomeOfEvents } from '../agents/chat-outcome.ts';
import { ExecutionFailedError, UpstreamError } from '../core/errors.ts';
import { childLineageHeader, LINEAGE_HEADER } from '../core/http/lineage.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { Ports } from '../ports.ts';
import type { ChannelRecord } from './channel.schema.ts';

/** Outlives the longest chat (SPEC part 8: 900 s streaming) and no more; minted per run, never stored. */
const RUN_TOKEN_TTL_MS = 16 * 60_000;

/**
 * Runs the channel's agent on `text` in the conversation of `conversationKey` (a sender, a thread,
 * or the owner's tests) through the agent's chat endpoint on the streaming host, as cron runs do:
 * the chat service then authenticates, bills the owner, stores the conversation and records the
 * run as a child of `scope`'s request. The credential is a run token for the owner that can chat
 * with this agent and nothing else. In-process chat would put the chat service and the runtime
 * client in this area's functions, past their 200 KB budget. A conversation that is gone starts anew.
 */
export async function chatOnChannel(
  channel: ChannelRecord,
  conversationKey: string,
  text: string,
  scope: Omit<RequestScope, 'actor'>,
  ports: Pick<Ports, 'channels' | 'runTokens' | 'fetch'>,
): Promise<{ reply: string; conversationId: string }> {
  const sender = await ports.channels.getSender(channel.channelId, conversationKey);
  const token = await ports.runTokens.mint({ userId: channel.ownerId, keys: null, agents: [channel.agentId] }, RUN_TOKEN_TTL_MS);
  const known = sender?.conversationId;
  let answer = await chat(channel, text, known, token, scope, ports);
  if (answer.status === 404 && known !== undefined && errorMessageOf(answer.body)?.includes('Conversation') === true)
    answer = await chat(channel, text, undefined, token, scope, ports);
  if (answer.status !== 200 || answer.conversationId === null)
    throw new UpstreamError(errorMessageOf(answer.body) ?? `The agent chat answered ${answer.status}.`, 'CHANNEL_AGENT_FAILED');
  if (answer.conversationId !== known) await ports.channels.updateSender(channel.channelId, conversationKey, { conversationId: answer.conversationId });
  const outcome = outcomeOfEvents(answer.body);
  if (!outcome.ok) throw new ExecutionFailedError(outcome.error, 'AGENT_EXECUTION_FAILED');
  return { reply: outcome.response, conversationId: answer.conversationId };
}

async function chat(
  channel: ChannelRecord,
  prompt: string,
  conversationId: string | undefined,
  token: string,
  scope: Omit<RequestScope, 'actor'>,
  ports: Pick<Ports, 'fetch'>,
): Promise<{ status: number; body: string; conversationId: string | null }> {
  let response: Response;
  try {
    response = await ports.fetch(`${scope.urls.streamUrl}/agent/${encodeURIComponent(channel.agentId)}/chat`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        [LINEAGE_HEADER]: childLineageHeader(scope.lineage),
      },
      body: JSON.stringify({ prompt, ...(conversationId !== undefined ? { conversationId } : {}) }),
      signal: AbortSignal.any([scope.signal, AbortSignal.timeout(RUN_TOKEN_TTL_MS)]),
    });
  } catch {
    throw new UpstreamError('The agent chat endpoint could not be reached.', 'CHANNEL_AGENT_UNREACHABLE');
  }
  return { status: response.status, body: await response.text(), conversationId: response.headers.get('x-conversation-id') };
}
