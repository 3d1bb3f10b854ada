import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { readItem, readItems, sendIf, type Db, type ItemRead, writeIf } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import { createUniqueClaims, type Claim } from '../core/db/unique-claim.ts';
import type { UserRecord } from './user.schema.ts';

export interface AliasClaim {
  readonly alias: string;
  readonly userId: string;
  readonly claimedAt: number;
}

/**
 * Accounts and their aliases. Alias uniqueness is the `aliases` table key, claimed by the protocol
 * of `core/db/unique-claim.ts` before the account takes the alias.
 */
export interface UserStore {
  get(userId: string): Promise<UserRecord | null>;
  /** The same read as `get`, described, to be read together with other items (`readItems`). */
  read(userId: string): ItemRead<UserRecord>;
  /** Several accounts read together (`readItems`), by id; missing ones are absent. */
  getMany(userIds: readonly string[]): Promise<ReadonlyMap<string, UserRecord>>;
  /** False when the user id is taken. */
  create(user: UserRecord): Promise<boolean>;
  list(limit: number, cursor: string | null): Promise<Page<UserRecord>>;
  /**
   * Claims `alias` for `userId`; false when another account holds it. Re-claiming one's own alias
   * succeeds; a stale claim (old, and its account does not carry the alias) is taken over.
   */
  claimAlias(claim: AliasClaim): Promise<boolean>;
  getAliasClaim(alias: string): Promise<AliasClaim | null>;
  /** Removes a claim only if it still belongs to `userId` and was made at `claimedAt`. */
  releaseAlias(claim: AliasClaim): Promise<void>;
  /** Sets the alias field if it still has `expected`; false otherwise. */
  setAlias(userId: string, alias: string, expected: string | null, now: number): Promise<boolean>;
  updateProfile(userId: string, fields: Partial<Pick<UserRecord, 'displayName' | 'email' | 'bio'>>, now: number): Promise<UserRecord | null>;
  markDeleted(userId: string, now: number): Promise<void>;
}

const claimOf = (alias: AliasClaim): Claim => ({ key: alias.alias, holderId: alias.userId, claimedAt: alias.claimedAt });

/** Aliases whose owner the cache holds (about 100 bytes each); the least recently read go first. */
export const ALIAS_CACHE_ENTRIES = 10_000;

/**
 * Alias to owner in memory, for a process through which every claim and release goes (the local
 * platform): those clear the alias before and after their write, and a read that overlapped any
 * of them keeps nothing, so the cache never answers older than a claim or release already made.
 * Misses are kept too (an unknown site name costs no read either). Not in the cloud, where each
 * function instance would miss the others' changes (CloudFront caches the sites there).
 */
function createAliasCache() {
  const owners = new Map<string, AliasClaim | null>();
  // Bumped by every change: a read begun before one keeps nothing.
  let generation = 0;
  return {
    async read(alias: string, load: () => Promise<AliasClaim | null>): Promise<AliasClaim | null> {
      if (owners.has(alias)) {
        const claim = owners.get(alias) ?? null;
        owners.delete(alias);
        owners.set(alias, claim);
        return claim;
      }
      const started = generation;
      const claim = await load();
      if (generation === started) {
        owners.set(alias, claim);
        if (owners.size > ALIAS_CACHE_ENTRIES) owners.delete(owners.keys().next().value as string);
      }
      return claim;
    },
    async change<T>(alias: string, write: () => Promise<T>): Promise<T> {
      generation += 1;
      owners.delete(alias);
      try {
        return await write();
      } finally {
        generation += 1;
        owners.delete(alias);
      }
    },
  };
}

export function createUserStore(db: Db, options: { readonly cacheAliases?: boolean } = {}): UserStore {
  const aliasCache = options.cacheAliases === true ? createAliasCache() : null;
  const users = db.table('users');
  const read = (userId: string): ItemRead<UserRecord> => ({ table: users, key: { userId }, as: (item) => item as unknown as UserRecord });
  const get = (userId: string) => readItem(db, read(userId));
  // Deleted accounts keep their alias, so nobody can take over their public addresses.
  const aliases = createUniqueClaims(db, {
    table: db.table('aliases'),
    keyAttribute: 'alias',
    holderAttribute: 'userId',
    readHolder: get,
    keyOf: (user) => user.alias,
  });
  return {
    get,
    read,
    async getMany(userIds) {
      const ids = [...new Set(userIds)];
      const found = ids.length === 0 ? [] : await readItems(db, ids.map(read));
      return new Map(found.filter((user): user is UserRecord => user !== null).map((user) => [user.userId, user]));
    },
    async create(user) {
      return writeIf(db.doc.send(new PutCommand({ TableName: users, Item: user, ConditionExpression: 'attribute_not_exists(userId)' })));
    },
    list(limit, cursor) {
      return listPage<UserRecord>(
        db,
        { table: users, index: 'byKind', partitionKey: 'kind', partitionValue: 'user', sortKey: 'createdAt', itemKey: 'userId', newestFirst: false },
        limit,
        cursor,
      );
    },
    claimAlias: (claim) => (aliasCache === null ? aliases.claim(claimOf(claim)) : aliasCache.change(claim.alias, () => aliases.claim(claimOf(claim)))),
    async getAliasClaim(alias) {
      const load = async () => {
        const claim = await aliases.read(alias);
        return claim === null ? null : { alias, userId: claim.holderId, claimedAt: claim.claimedAt };
      };
      return aliasCache === null ? load() : aliasCache.read(alias, load);
    },
    releaseAlias: (claim) => (aliasCache === null ? aliases.release(claimOf(claim)) : aliasCache.change(claim.alias, () => aliases.release(claimOf(claim)))),
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
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: users,
            Key: { userId },
            UpdateExpression: `SET ${sets.join(', ')}`,
            ConditionExpression: 'attribute_exists(userId)',
            ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return out === null ? null : (out.Attributes as UserRecord);
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
