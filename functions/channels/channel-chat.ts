import type { UserActor } from '../core/auth/actor.ts';
import { NotFoundError, type PlatformError } from '../core/errors.ts';
import type { RequestScope } from '../core/request-scope.ts';
import type { Ports } from '../ports.ts';
import { openChat } from '../agents/chat.service.ts';
import type { ChannelRecord } from './channel.schema.ts';

/** The channel's owner as the chat's caller: channel runs are the owner's chats, billed to them. */
export function ownerActor(channel: Pick<ChannelRecord, 'ownerId'>): UserActor {
  return { kind: 'user', userId: channel.ownerId, alias: null, isAdmin: false, via: 'run-token', tokenId: null, scope: 'full', roleKeys: null };
}

/**
 * Runs the channel's agent on `text` in the conversation of `conversationKey` (a sender, a thread,
 * or the owner's tests), through the chat service as the owner: its billing, usage record (a child
 * of `scope`'s lineage) and conversation store. A conversation that is gone starts a new one.
 */
export async function chatOnChannel(
  channel: ChannelRecord,
  conversationKey: string,
  text: string,
  scope: Omit<RequestScope, 'actor'>,
  ports: Ports,
): Promise<{ reply: string; conversationId: string }> {
  const sender = await ports.channels.getSender(channel.channelId, conversationKey);
  const chatScope = { ...scope, actor: ownerActor(channel) };
  let known = sender?.conversationId;
  let session;
  try {
    session = await openChat(chatScope, channel.agentId, { prompt: text, conversationId: known }, ports);
  } catch (error) {
    if (!(error instanceof NotFoundError) || known === undefined) throw error;
    known = undefined;
    session = await openChat(chatScope, channel.agentId, { prompt: text }, ports);
  }
  let reply = '';
  let failure: PlatformError | null = null;
  for await (const event of session.run(scope.signal)) {
    if (event.type === 'text') reply += event.data;
    else if (event.type === 'error') failure ??= event.error;
  }
  if (known !== session.conversationId) await ports.channels.updateSender(channel.channelId, conversationKey, { conversationId: session.conversationId });
  if (failure !== null) throw failure;
  return { reply, conversationId: session.conversationId };
}
