import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, type Page } from '../core/db/cursor.ts';
import { isConditionFailed, type Db, writeIf } from '../core/db/dynamo.ts';
import type { UserRecord } from './user.schema.ts';

export interface AliasClaim {
  readonly alias: string;
  readonly userId: string;
  readonly claimedAt: number;
}

/** Accounts and their aliases. Alias uniqueness is the `aliases` table key. */
export interface UserStore {
  get(userId: string): Promise<UserRecord | null>;
  /** False when the user id is taken. */
  create(user: UserRecord): Promise<boolean>;
  list(limit: number, cursor: string | null): Promise<Page<UserRecord>>;
  /** Claims `alias` for `userId`; false when another account holds it. Re-claiming one's own alias succeeds. */
  claimAlias(claim: AliasClaim): Promise<boolean>;
  getAliasClaim(alias: string): Promise<AliasClaim | null>;
  /** Removes a claim only if it still belongs to `userId` and was made at `claimedAt`. */
  releaseAlias(claim: AliasClaim): Promise<void>;
  /** Sets the alias field if it still has `expected`; false otherwise. */
  setAlias(userId: string, alias: string, expected: string | null, now: number): Promise<boolean>;
  updateProfile(userId: string, fields: Partial<Pick<UserRecord, 'displayName' | 'email' | 'bio'>>, now: number): Promise<UserRecord | null>;
  markDeleted(userId: string, now: number): Promise<void>;
}

export function createUserStore(db: Db): UserStore {
  const users = db.table('users');
  const aliases = db.table('aliases');
  return {
    async get(userId) {
      const out = await db.doc.send(new GetCommand({ TableName: users, Key: { userId }, ConsistentRead: true }));
      return (out.Item as UserRecord | undefined) ?? null;
    },
    async create(user) {
      return writeIf(
        db.doc.send(new PutCommand({ TableName: users, Item: user, ConditionExpression: 'attribute_not_exists(userId)' })),
      );
    },
    async list(limit, cursor) {
      const out = await db.doc.send(
        new QueryCommand({
          TableName: users,
          IndexName: 'byKind',
          KeyConditionExpression: 'kind = :k',
          ExpressionAttributeValues: { ':k': 'user' },
          Limit: limit,
          ExclusiveStartKey: decodeCursor(cursor),
        }),
      );
      return { items: (out.Items ?? []) as UserRecord[], nextCursor: encodeCursor(out.LastEvaluatedKey) };
    },
    async claimAlias(claim) {
      return writeIf(
        db.doc.send(
          new PutCommand({
            TableName: aliases,
            Item: claim,
            ConditionExpression: 'attribute_not_exists(alias) OR userId = :u',
            ExpressionAttributeValues: { ':u': claim.userId },
          }),
        ),
      );
    },
    async getAliasClaim(alias) {
      const out = await db.doc.send(new GetCommand({ TableName: aliases, Key: { alias }, ConsistentRead: true }));
      return (out.Item as AliasClaim | undefined) ?? null;
    },
    async releaseAlias(claim) {
      try {
        await db.doc.send(
          new DeleteCommand({
            TableName: aliases,
            Key: { alias: claim.alias },
            ConditionExpression: 'userId = :u AND claimedAt = :t',
            ExpressionAttributeValues: { ':u': claim.userId, ':t': claim.claimedAt },
          }),
        );
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
    },
    async setAlias(userId, alias, expected, now) {
      return writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: users,
            Key: { userId },
            UpdateExpression: 'SET alias = :a, updatedAt = :now',
            ConditionExpression: expected === null ? 'attribute_exists(userId) AND (attribute_not_exists(alias) OR alias = :null)' : 'alias = :expected',
            ExpressionAttributeValues: { ':a': alias, ':now': now, ...(expected === null ? { ':null': null } : { ':expected': expected }) },
          }),
        ),
      );
    },
    async updateProfile(userId, fields, now) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':now': now };
      const sets = ['updatedAt = :now'];
      for (const [key, value] of Object.entries(fields)) {
        if (value === undefined) continue;
        names[`#${key}`] = key;
        values[`:${key}`] = value;
        sets.push(`#${key} = :${key}`);
      }
      try {
        const out = await db.doc.send(
          new UpdateCommand({
            TableName: users,
            Key: { userId },
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: 'attribute_exists(userId)',
            ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        return out.Attributes as UserRecord;
      } catch (error) {
        if (isConditionFailed(error)) return null;
        throw error;
      }
    },
    async markDeleted(userId, now) {
      await db.doc.send(
        new UpdateCommand({
          TableName: users,
          Key: { userId },
          UpdateExpression: 'SET #s = :deleted, deletedAt = :now, updatedAt = :now',
          ConditionExpression: 'attribute_exists(userId)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':deleted': 'deleted', ':now': now },
        }),
      );
    },
  };
}
