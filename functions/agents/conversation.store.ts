import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { BlobStore } from '../core/blobs.ts';
import { queryItems, type Db } from '../core/db/dynamo.ts';
import { putIfUnchanged } from '../core/db/optimistic-update.ts';
import type { ConversationRecord, StoredMessage } from './conversation.schema.ts';

/** Messages beyond this serialized size live in the blob store, keeping items far from 400 KB. */
export const INLINE_MESSAGES_BYTES = 200 * 1024;

export interface ConversationStore {
  get(conversationId: string): Promise<ConversationRecord | null>;
  messagesOf(conversation: ConversationRecord): Promise<StoredMessage[]>;
  /**
   * Saves the conversation with its full message list, if nobody else saved it since
   * `expectedUpdatedAt` (null for a new one). False on that conflict.
   */
  save(conversation: Omit<ConversationRecord, 'messages' | 'messagesKey'>, messages: StoredMessage[], expectedUpdatedAt: number | null): Promise<boolean>;
  listByUser(userId: string, limit: number): Promise<ConversationRecord[]>;
  listByUserAndAgent(userId: string, agentId: string, limit: number): Promise<ConversationRecord[]>;
}

export function createConversationStore(db: Db, blobs: BlobStore): ConversationStore {
  const table = db.table('conversations');
  const list = (IndexName: string, key: string, value: string, limit: number) =>
    queryItems<ConversationRecord>(
      db,
      { TableName: table, IndexName, KeyConditionExpression: `${key} = :v`, ExpressionAttributeValues: { ':v': value }, ScanIndexForward: false },
      limit,
    );
  return {
    async get(conversationId) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { conversationId }, ConsistentRead: true }));
      return (out.Item as ConversationRecord | undefined) ?? null;
    },
    async messagesOf(conversation) {
      if (conversation.messages !== null) return conversation.messages;
      if (conversation.messagesKey === null) return [];
      const blob = await blobs.get(conversation.messagesKey);
      return blob === null ? [] : (JSON.parse(blob.toString('utf8')) as StoredMessage[]);
    },
    async save(conversation, messages, expectedUpdatedAt) {
      const serialized = JSON.stringify(messages);
      let messagesKey: string | null = null;
      if (Buffer.byteLength(serialized) > INLINE_MESSAGES_BYTES) {
        // A new object per save: the record points at it only once the record is written.
        messagesKey = `conversations/${conversation.conversationId}/${conversation.updatedAt}.json`;
        await blobs.put(messagesKey, serialized, 'application/json');
      }
      const item: ConversationRecord = { ...conversation, messages: messagesKey === null ? messages : null, messagesKey };
      return (await putIfUnchanged(db, table, item, expectedUpdatedAt)) !== null;
    },
    listByUser: (userId, limit) => list('byUser', 'userId', userId, limit),
    listByUserAndAgent: (userId, agentId, limit) => list('byUserAgent', 'userAgent', `${userId}#${agentId}`, limit),
  };
}
