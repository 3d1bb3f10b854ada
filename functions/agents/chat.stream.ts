import type { ResponseStream } from '../core/http/route.ts';
import { errorOf, type ChatSession } from './chat.service.ts';

/**
 * Writes a chat as the streaming protocol of SPEC 4.1: `__META__{json}__`, then text as the agent
 * produces it, `__TOOL__{name}__` when a tool starts, `__ERROR__{json}__` on failure, and
 * `__METRICS__{json}` last. Each piece is written (and flushed) as it arrives.
 */
export async function streamChat(session: ChatSession, stream: ResponseStream, signal: AbortSignal): Promise<void> {
  try {
    stream.start(200, { 'content-type': 'text/plain; charset=utf-8', 'x-conversation-id': session.conversationId, 'cache-control': 'no-store' });
    await stream.write(`__META__${JSON.stringify({ conversationId: session.conversationId, agentId: session.agent.agentId })}__`);
  } catch (error) {
    // No run then: what the session left in flight is still awaited before the request ends.
    await session.close();
    throw error;
  }
  for await (const event of session.run(signal)) {
    if (event.type === 'text') await stream.write(event.data);
    else if (event.type === 'tool') await stream.write(`__TOOL__${event.name}__`);
    else if (event.type === 'error') await stream.write(`__ERROR__${JSON.stringify(errorOf(event.error))}__`);
    else await stream.write(`__METRICS__${JSON.stringify(event.metrics)}`);
  }
  await stream.end();
}
