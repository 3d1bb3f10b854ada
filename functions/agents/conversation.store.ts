import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { BlobStore } from '../core/blobs.ts';
import { queryItems, type Db } from '../core/db/dynamo.ts';
import { putIfUnchanged } from '../core/db/optimistic-update.ts';
import { uuid } from '../core/ids.ts';
import type { FrameworkMessage } from '../runtimes/compute.ts';
import type { ConversationRecord, StoredMessage } from './conversation.schema.ts';

/** Messages beyond this serialized size live in the blob store, keeping items far from 400 KB. */
export const INLINE_MESSAGES_BYTES = 200 * 1024;

export interface ConversationStore {
  get(conversationId: string): Promise<ConversationRecord | null>;
  messagesOf(conversation: ConversationRecord): Promise<StoredMessage[]>;
  /** The agent's own message list as last stored; null for a conversation that has none (stored before it was kept). */
  frameworkMessagesOf(conversation: ConversationRecord): Promise<FrameworkMessage[] | null>;
  /**
   * Saves the conversation with its full message list (and the agent's own list, when given), if
   * nobody else saved it since `expectedUpdatedAt` (null for a new one). False on that conflict.
   */
  save(
    conversation: Omit<ConversationRecord, 'messages' | 'messagesKey' | 'frameworkMessages' | 'frameworkMessagesKey'>,
    messages: StoredMessage[],
    expectedUpdatedAt: number | null,
    frameworkMessages?: readonly FrameworkMessage[] | null,
  ): Promise<boolean>;
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
    async frameworkMessagesOf(conversation) {
      if (typeof conversation.frameworkMessages === 'string') return JSON.parse(conversation.frameworkMessages) as FrameworkMessage[];
      if (typeof conversation.frameworkMessagesKey !== 'string') return null;
      const blob = await blobs.get(conversation.frameworkMessagesKey);
      return blob === null ? null : (JSON.parse(blob.toString('utf8')) as FrameworkMessage[]);
    },
    async save(conversation, messages, expectedUpdatedAt, frameworkMessages) {
      // A new object per save, under a name no parallel save shares: the record points at it only
      // once the record is written, so a save that loses the race never replaces the winner's.
      const blobKey = (kind: string) => `conversations/${conversation.conversationId}/${conversation.updatedAt}-${uuid()}${kind}.json`;
      const serialized = JSON.stringify(messages);
      const textBytes = Buffer.byteLength(serialized);
      let messagesKey: string | null = null;
      if (textBytes > INLINE_MESSAGES_BYTES) {
        messagesKey = blobKey('');
        await blobs.put(messagesKey, serialized, 'application/json');
      }
      // Inline only beside inline text and within the same budget, so the item stays far from 400 KB.
      let framework: Pick<ConversationRecord, 'frameworkMessages' | 'frameworkMessagesKey'> = {};
      if (frameworkMessages !== undefined && frameworkMessages !== null) {
        const json = JSON.stringify(frameworkMessages);
        if (messagesKey === null && textBytes + Buffer.byteLength(json) <= INLINE_MESSAGES_BYTES) framework = { frameworkMessages: json };
        else {
          const key = blobKey('-framework');
          await blobs.put(key, json, 'application/json');
          framework = { frameworkMessagesKey: key };
        }
      }
      const item: ConversationRecord = { ...conversation, messages: messagesKey === null ? messages : null, messagesKey, ...framework };
      return (await putIfUnchanged(db, table, item, expectedUpdatedAt)) !== null;
    },
    listByUser: (userId, limit) => list('byUser', 'userId', userId, limit),
    listByUserAndAgent: (userId, agentId, limit) => list('byUserAgent', 'userAgent', `${userId}#${agentId}`, limit),
  };
}
