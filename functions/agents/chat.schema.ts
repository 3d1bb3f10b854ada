import * as z from 'zod';

/*
 * What the chat routes read. A file of its own, apart from the agent's other schemas
 * (agent.schema.ts, which re-exports these): the streaming function serves only chats, and every
 * schema a module builds when it loads is in the bundle of each function that imports it.
 */

export const agentIdParams = z.object({ agentId: z.uuid({ error: 'must be an agent id (UUID)' }) });

export const chatBody = z.object({
  prompt: z.string().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters'),
  conversationId: z.uuid({ error: 'must be a conversation id (UUID)' }).optional(),
});

/** Browser chat: `sessionId` and `conversationId` name the same thing. */
export const browserChatQuery = z
  .object({
    prompt: z.string().min(1, 'must not be empty').max(100_000),
    sessionId: z.uuid({ error: 'must be a conversation id (UUID)' }).optional(),
    conversationId: z.uuid({ error: 'must be a conversation id (UUID)' }).optional(),
  })
  .transform((q) => ({ prompt: q.prompt, conversationId: q.conversationId ?? q.sessionId }));
