import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { sendIf, type Db } from '../core/db/dynamo.ts';
import type { PendingAuthorization } from './oauth.schema.ts';

export type ConsumeResult =
  | { readonly status: 'consumed'; readonly pending: PendingAuthorization }
  | { readonly status: 'expired' }
  /** Never issued, or already used. */
  | { readonly status: 'missing' };

/** Pending OAuth authorizations, one item per state, removed by their TTL or by their callback. */
export interface OAuthStateStore {
  /** Writes a new pending authorization; states are random, so a clash is a bug and throws. */
  put(pending: PendingAuthorization): Promise<void>;
  /**
   * Removes the state and returns what it held, in one conditional DeleteItem: of two concurrent
   * callbacks with the same state, exactly one gets it. `now` is epoch milliseconds; an expired
   * state is removed too but reported as expired, since DynamoDB's TTL deletes items up to days
   * late and dynalite never does.
   */
  consume(state: string, now: number): Promise<ConsumeResult>;
}

export function createOAuthStateStore(db: Db): OAuthStateStore {
  const table = db.table('oauth-states');
  return {
    async put(pending) {
      await db.doc.send(
        new PutCommand({ TableName: table, Item: pending, ConditionExpression: 'attribute_not_exists(#s)', ExpressionAttributeNames: { '#s': 'state' } }),
      );
    },
    async consume(state, now) {
      const out = await sendIf(
        db.doc.send(
          new DeleteCommand({
            TableName: table,
            Key: { state },
            // Without the condition a delete of a missing item succeeds too, and the loser of a race
            // could not tell; with it, only the call that actually removed the item sees ALL_OLD.
            ConditionExpression: 'attribute_exists(#s)',
            ExpressionAttributeNames: { '#s': 'state' },
            ReturnValues: 'ALL_OLD',
          }),
        ),
      );
      const pending = out?.Attributes as PendingAuthorization | undefined;
      if (pending === undefined) return { status: 'missing' };
      return pending.expiresAt > Math.floor(now / 1000) ? { status: 'consumed', pending } : { status: 'expired' };
    },
  };
}
