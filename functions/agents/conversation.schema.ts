import type { UserActor } from '../core/auth/actor.ts';

/** One message as stored and returned (SPEC part 2): text content, not the framework's block format. */
export interface StoredMessage {
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly timestamp: number;
}

export interface ConversationRecord {
  readonly conversationId: string;
  readonly agentId: string;
  readonly userId: string;
  /** `{userId}#{agentId}`: key of the index that lists one user's conversations with one agent. */
  readonly userAgent: string;
  /**
   * The embed visitor who started it, when one did: only that visitor may continue it (the owner
   * still may: it is theirs). Absent for the owner's own conversations.
   */
  readonly visitorId?: string;
  readonly title: string;
  readonly messageCount: number;
  /** Inline while small; past the threshold they move to the blob store under `messagesKey`. */
  readonly messages: StoredMessage[] | null;
  readonly messagesKey: string | null;
  /**
   * The agent's own message list after the last successful turn (the framework's blocks: tool use
   * and tool results too), restored into the next run; the text view above is what callers see.
   * A JSON string rather than a map, so a tool result nested deeper than DynamoDB's 32 levels or
   * holding its awkward types is stored all the same. Inline while the record stays small, else
   * in the blob store under `frameworkMessagesKey`; both absent on conversations stored before
   * the list was kept (they continue from the text view).
   */
  readonly frameworkMessages?: string | null;
  readonly frameworkMessagesKey?: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * Whether `actor` may continue `conversation`: it must be theirs and with this agent, and an embed
 * visitor's credential reaches only the conversations that visitor started. Everything else looks
 * the same to the caller (a 404), so a leaked conversation id reveals nothing.
 */
export function mayContinue(actor: Pick<UserActor, 'userId' | 'embedTokenId' | 'visitorId'>, conversation: ConversationRecord, agentId: string): boolean {
  if (conversation.userId !== actor.userId || conversation.agentId !== agentId) return false;
  // An embed credential without a visitor claim (issued before visitors had ids) continues nothing.
  if (actor.embedTokenId !== undefined) return actor.visitorId !== undefined && conversation.visitorId === actor.visitorId;
  return true;
}

/** Titles come from the first prompt, on one line. */
export function titleFrom(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  return line.length <= 80 ? line : `${line.slice(0, 77)}...`;
}

export function conversationSummary(c: ConversationRecord) {
  return { conversationId: c.conversationId, agentId: c.agentId, title: c.title, messageCount: c.messageCount, createdAt: c.createdAt, updatedAt: c.updatedAt };
}
