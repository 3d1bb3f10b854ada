import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { writeIf, type Db, queryItems } from '../core/db/dynamo.ts';
import type { KeyRecord } from './key.schema.ts';

/** An owner's sealed keys: one item per (user, service name). */
export interface KeyStore {
  get(userId: string, serviceName: string): Promise<KeyRecord | null>;
  /** Every key of the owner (bounded by MAX_KEYS_PER_USER, so one paged read). */
  list(userId: string): Promise<KeyRecord[]>;
  put(record: KeyRecord): Promise<void>;
  /** False when there was no such key. */
  delete(userId: string, serviceName: string): Promise<boolean>;
}

export function createKeyStore(db: Db): KeyStore {
  const table = db.table('keys');
  return {
    async get(userId, serviceName) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { userId, serviceName }, ConsistentRead: true }));
      return (out.Item as KeyRecord | undefined) ?? null;
    },
    list(userId) {
      return queryItems<KeyRecord>(db, {
        TableName: table,
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': userId },
        ConsistentRead: true,
      });
    },
    async put(record) {
      await db.doc.send(new PutCommand({ TableName: table, Item: record }));
    },
    async delete(userId, serviceName) {
      return writeIf(db.doc.send(new DeleteCommand({ TableName: table, Key: { userId, serviceName }, ConditionExpression: 'attribute_exists(serviceName)' })));
    },
  };
}
