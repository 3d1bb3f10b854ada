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
  readonly title: string;
  readonly messageCount: number;
  /** Inline while small; past the threshold they move to the blob store under `messagesKey`. */
  readonly messages: StoredMessage[] | null;
  readonly messagesKey: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** Titles come from the first prompt, on one line. */
export function titleFrom(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  return line.length <= 80 ? line : `${line.slice(0, 77)}...`;
}

export function conversationSummary(c: ConversationRecord) {
  return { conversationId: c.conversationId, agentId: c.agentId, title: c.title, messageCount: c.messageCount, createdAt: c.createdAt, updatedAt: c.updatedAt };
}
