import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, type Page } from '../core/db/cursor.ts';
import { isConditionFailed, type Db } from '../core/db/dynamo.ts';
import type { TokenRecord } from './token.schema.ts';

/**
 * Tokens live in two tables: `tokens` (metadata by id) and `token-digests` (digest -> token id and
 * user id). Auth reads the pointer, then the record and the account together, all strongly
 * consistent, and trusts a digest only if the token record still holds it, so revocation and
 * regeneration take effect on the very next request and no crash between the two writes can leave
 * a stale secret valid.
 */
export interface TokenStore {
  get(tokenId: string): Promise<TokenRecord | null>;
  /** The digest pointer: which token (and, for pointers written since it was added, which user) holds it. */
  findPointer(digest: string): Promise<{ tokenId: string; userId: string | null } | null>;
  findByDigest(digest: string): Promise<TokenRecord | null>;
  /** Writes the digest pointer, then the record. */
  create(token: TokenRecord): Promise<void>;
  listByUser(userId: string, options: { limit: number; cursor: string | undefined; kind: TokenRecord['kind'] }): Promise<Page<TokenRecord>>;
  countActive(userId: string, kind: TokenRecord['kind']): Promise<number>;
  rename(tokenId: string, userId: string, name: string, now: number): Promise<TokenRecord | null>;
  /** Moves an active token to a new digest; false if it was revoked or changed meanwhile. */
  replaceDigest(token: TokenRecord, digest: string, tokenPrefix: string, now: number): Promise<boolean>;
  revoke(token: TokenRecord, now: number): Promise<void>;
  markUsed(tokenId: string, now: number): Promise<void>;
}

export function createTokenStore(db: Db): TokenStore {
  const tokens = db.table('tokens');
  const digests = db.table('token-digests');

  const get = async (tokenId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: tokens, Key: { tokenId }, ConsistentRead: true }));
    return (out.Item as TokenRecord | undefined) ?? null;
  };
  const deleteDigest = (digest: string, tokenId: string) =>
    db.doc
      .send(new DeleteCommand({ TableName: digests, Key: { digest }, ConditionExpression: 'tokenId = :t', ExpressionAttributeValues: { ':t': tokenId } }))
      .catch((error: unknown) => {
        if (!isConditionFailed(error)) throw error;
      });

  const findPointer = async (digest: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: digests, Key: { digest }, ConsistentRead: true }));
    const tokenId = out.Item?.['tokenId'];
    const userId = out.Item?.['userId'];
    return typeof tokenId === 'string' ? { tokenId, userId: typeof userId === 'string' ? userId : null } : null;
  };

  return {
    get,
    findPointer,
    async findByDigest(digest) {
      const pointer = await findPointer(digest);
      return pointer === null ? null : get(pointer.tokenId);
    },
    async create(token) {
      await db.doc.send(new PutCommand({ TableName: digests, Item: { digest: token.digest, tokenId: token.tokenId, userId: token.userId }, ConditionExpression: 'attribute_not_exists(digest)' }));
      await db.doc.send(new PutCommand({ TableName: tokens, Item: token, ConditionExpression: 'attribute_not_exists(tokenId)' }));
    },
    async listByUser(userId, { limit, cursor, kind }) {
      const out = await db.doc.send(
        new QueryCommand({
          TableName: tokens,
          IndexName: 'byUser',
          KeyConditionExpression: 'userId = :u',
          FilterExpression: 'kind = :k',
          ExpressionAttributeValues: { ':u': userId, ':k': kind },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: decodeCursor(cursor),
        }),
      );
      return { items: (out.Items ?? []) as TokenRecord[], nextCursor: encodeCursor(out.LastEvaluatedKey) };
    },
    async countActive(userId, kind) {
      let count = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const out = await db.doc.send(
          new QueryCommand({
            TableName: tokens,
            IndexName: 'byUser',
            KeyConditionExpression: 'userId = :u',
            FilterExpression: 'kind = :k AND #s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':u': userId, ':k': kind, ':active': 'active' },
            Select: 'COUNT',
            ExclusiveStartKey: start,
          }),
        );
        count += out.Count ?? 0;
        start = out.LastEvaluatedKey;
      } while (start !== undefined);
      return count;
    },
    async rename(tokenId, userId, name, now) {
      try {
        const out = await db.doc.send(
          new UpdateCommand({
            TableName: tokens,
            Key: { tokenId },
            UpdateExpression: 'SET #n = :n, updatedAt = :now',
            ConditionExpression: 'userId = :u',
            ExpressionAttributeNames: { '#n': 'name' },
            ExpressionAttributeValues: { ':n': name, ':now': now, ':u': userId },
            ReturnValues: 'ALL_NEW',
          }),
        );
        return out.Attributes as TokenRecord;
      } catch (error) {
        if (isConditionFailed(error)) return null;
        throw error;
      }
    },
    async replaceDigest(token, digest, tokenPrefix, now) {
      await db.doc.send(new PutCommand({ TableName: digests, Item: { digest, tokenId: token.tokenId, userId: token.userId }, ConditionExpression: 'attribute_not_exists(digest)' }));
      try {
        await db.doc.send(
          new UpdateCommand({
            TableName: tokens,
            Key: { tokenId: token.tokenId },
            UpdateExpression: 'SET digest = :new, tokenPrefix = :p, updatedAt = :now, lastUsedAt = :null',
            ConditionExpression: 'digest = :old AND #s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':new': digest, ':old': token.digest, ':p': tokenPrefix, ':now': now, ':null': null, ':active': 'active' },
          }),
        );
      } catch (error) {
        await deleteDigest(digest, token.tokenId);
        if (isConditionFailed(error)) return false;
        throw error;
      }
      await deleteDigest(token.digest, token.tokenId);
      return true;
    },
    async revoke(token, now) {
      await db.doc.send(
        new UpdateCommand({
          TableName: tokens,
          Key: { tokenId: token.tokenId },
          UpdateExpression: 'SET #s = :revoked, revokedAt = if_not_exists(revokedAt, :now), updatedAt = :now',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':revoked': 'revoked', ':now': now },
        }),
      );
      await deleteDigest(token.digest, token.tokenId);
    },
    async markUsed(tokenId, now) {
      await db.doc.send(
        new UpdateCommand({
          TableName: tokens,
          Key: { tokenId },
          UpdateExpression: 'SET lastUsedAt = :now',
          ConditionExpression: 'attribute_exists(tokenId)',
          ExpressionAttributeValues: { ':now': now },
        }),
      ).catch((error: unknown) => {
        if (!isConditionFailed(error)) throw error;
      });
    },
  };
}
