import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { countItems, queryItems, readItem, sendIf, writeIf, type Db, type ItemRead } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import type { TokenRecord } from './token.schema.ts';

/**
 * Tokens live in two tables: `tokens` (metadata by id) and `token-digests` (digest -> token id and
 * user id). Auth reads the pointer, then the record and the account in one BatchGetItem, all strongly
 * consistent, and trusts a digest only if the token record still holds it, so revocation and
 * regeneration take effect on the very next request and no crash between the two writes can leave
 * a stale secret valid.
 */
export interface TokenStore {
  get(tokenId: string): Promise<TokenRecord | null>;
  /** The same read as `get`, described, to be read together with other items (`readItems`). */
  read(tokenId: string): ItemRead<TokenRecord>;
  /** The digest pointer: which token (and, for pointers written since it was added, which user) holds it. */
  findPointer(digest: string): Promise<{ tokenId: string; userId: string | null } | null>;
  findByDigest(digest: string): Promise<TokenRecord | null>;
  /** Writes the digest pointer, then the record. */
  create(token: TokenRecord): Promise<void>;
  listByUser(userId: string, options: { limit: number; cursor: string | undefined; kind: TokenRecord['kind'] }): Promise<Page<TokenRecord>>;
  countActive(userId: string, kind: TokenRecord['kind']): Promise<number>;
  /** Whether the user holds a token of `kind` that is neither revoked nor expired at `now` (cron runs, SPEC 5.8). */
  hasUsable(userId: string, kind: TokenRecord['kind'], now: number): Promise<boolean>;
  rename(tokenId: string, userId: string, name: string, now: number): Promise<TokenRecord | null>;
  /** Moves an active token to a new digest; false if it was revoked or changed meanwhile. */
  replaceDigest(token: TokenRecord, digest: string, tokenPrefix: string, now: number): Promise<boolean>;
  revoke(token: TokenRecord, now: number): Promise<void>;
  markUsed(tokenId: string, now: number): Promise<void>;
}

export function createTokenStore(db: Db): TokenStore {
  const tokens = db.table('tokens');
  const digests = db.table('token-digests');

  const read = (tokenId: string): ItemRead<TokenRecord> => ({ table: tokens, key: { tokenId }, as: (item) => item as unknown as TokenRecord });
  const get = (tokenId: string) => readItem(db, read(tokenId));
  // Only the token's own pointer: a digest that already points elsewhere is not this token's to remove.
  const deleteDigest = (digest: string, tokenId: string) =>
    writeIf(
      db.doc.send(
        new DeleteCommand({ TableName: digests, Key: { digest }, ConditionExpression: 'tokenId = :t', ExpressionAttributeValues: { ':t': tokenId } }),
      ),
    );

  const findPointer = async (digest: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: digests, Key: { digest }, ConsistentRead: true }));
    const tokenId = out.Item?.['tokenId'];
    const userId = out.Item?.['userId'];
    return typeof tokenId === 'string' ? { tokenId, userId: typeof userId === 'string' ? userId : null } : null;
  };

  return {
    get,
    read,
    findPointer,
    async findByDigest(digest) {
      const pointer = await findPointer(digest);
      return pointer === null ? null : get(pointer.tokenId);
    },
    async create(token) {
      await db.doc.send(
        new PutCommand({
          TableName: digests,
          Item: { digest: token.digest, tokenId: token.tokenId, userId: token.userId },
          ConditionExpression: 'attribute_not_exists(digest)',
        }),
      );
      await db.doc.send(new PutCommand({ TableName: tokens, Item: token, ConditionExpression: 'attribute_not_exists(tokenId)' }));
    },
    listByUser(userId, { limit, cursor, kind }) {
      return listPage<TokenRecord>(
        db,
        {
          table: tokens,
          index: 'byUser',
          partitionKey: 'userId',
          partitionValue: userId,
          sortKey: 'createdAt',
          itemKey: 'tokenId',
          newestFirst: true,
          filter: { expression: 'kind = :k', values: { ':k': kind } },
        },
        limit,
        cursor,
      );
    },
    countActive(userId, kind) {
      return countItems(db, {
        TableName: tokens,
        IndexName: 'byUser',
        KeyConditionExpression: 'userId = :u',
        FilterExpression: 'kind = :k AND #s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':u': userId, ':k': kind, ':active': 'active' },
      });
    },
    async hasUsable(userId, kind, now) {
      const found = await queryItems(
        db,
        {
          TableName: tokens,
          IndexName: 'byUser',
          KeyConditionExpression: 'userId = :u',
          FilterExpression: 'kind = :k AND #s = :active AND (expiresAt = :null OR expiresAt > :now)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':u': userId, ':k': kind, ':active': 'active', ':null': null, ':now': now },
          ProjectionExpression: 'tokenId',
        },
        1,
      );
      return found.length > 0;
    },
    async rename(tokenId, userId, name, now) {
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: tokens,
            Key: { tokenId },
            UpdateExpression: 'SET #n = :n, updatedAt = :now',
            ConditionExpression: 'userId = :u',
            ExpressionAttributeNames: { '#n': 'name' },
            ExpressionAttributeValues: { ':n': name, ':now': now, ':u': userId },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return out === null ? null : (out.Attributes as TokenRecord);
    },
    async replaceDigest(token, digest, tokenPrefix, now) {
      await db.doc.send(
        new PutCommand({
          TableName: digests,
          Item: { digest, tokenId: token.tokenId, userId: token.userId },
          ConditionExpression: 'attribute_not_exists(digest)',
        }),
      );
      let moved: boolean;
      try {
        moved = await writeIf(
          db.doc.send(
            new UpdateCommand({
              TableName: tokens,
              Key: { tokenId: token.tokenId },
              UpdateExpression: 'SET digest = :new, tokenPrefix = :p, updatedAt = :now, lastUsedAt = :null',
              ConditionExpression: 'digest = :old AND #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':new': digest, ':old': token.digest, ':p': tokenPrefix, ':now': now, ':null': null, ':active': 'active' },
            }),
          ),
        );
      } catch (error) {
        await deleteDigest(digest, token.tokenId);
        throw error;
      }
      // The record keeps the digest it holds, so only one pointer of the two may stay.
      await deleteDigest(moved ? token.digest : digest, token.tokenId);
      return moved;
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
      // A token deleted meanwhile is not brought back as a stub holding only lastUsedAt.
      await writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: tokens,
            Key: { tokenId },
            UpdateExpression: 'SET lastUsedAt = :now',
            ConditionExpression: 'attribute_exists(tokenId)',
            ExpressionAttributeValues: { ':now': now },
          }),
        ),
      );
    },
  };
}
