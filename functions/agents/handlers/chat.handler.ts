import type { PlatformError } from '../../core/errors.ts';
import { defineRoute, Reply } from '../../core/http/route.ts';
import { agentIdParams, chatBody } from '../chat.schema.ts';
import { openChat, readChat, type ChatMetrics } from '../chat.service.ts';
import { chatResponse } from '../agent.schema.ts';

/** Buffered chat: the whole reply in envelope A; a failed run answers with its error code. */
export default defineRoute({
  response: chatResponse,
  params: agentIdParams,
  body: chatBody,
  // The agent (and the conversation) are read while the rate limiter answers.
  prefetch: (ctx) => readChat(ctx.params.agentId, ctx.body.conversationId, ctx.ports),
  async run(ctx) {
    const session = await openChat(ctx, ctx.params.agentId, ctx.body, ctx.ports, ctx.prefetched);
    let response = '';
    let metrics: ChatMetrics | null = null;
    let failure: PlatformError | null = null;
    // The route's deadline stops the run too: past it nobody reads the answer, and the time is billed.
    // A failure is thrown only once the run has ended: leaving at the error would miss the run's
    // `end`, and a run whose end is unseen is billed as started (a run that never started is refunded).
    for await (const event of session.run(ctx.signal)) {
      if (event.type === 'text') response += event.data;
      else if (event.type === 'metrics') metrics = event.metrics;
      else if (event.type === 'error') failure ??= event.error;
    }
    if (failure !== null) throw failure;
    return Reply.ok(
      { response, conversationId: session.conversationId, agentId: session.agent.agentId, metrics },
      { headers: { 'x-conversation-id': session.conversationId } },
    );
  },
});
