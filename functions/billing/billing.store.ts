/**
 * The billing tables: Stripe customers and connected accounts per user, subscriptions (to a plan
 * or to a paid MCP server), processed webhook events, the money ledger and free-trial counters.
 * Every rule spanning items is a single-item conditional write (docs/decisions/0009).
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../core/clock.ts';
import { sendIf, writeIf, type Db } from '../core/db/dynamo.ts';
import type { Tier } from '../core/plans.ts';

/** `plan` for the platform's plan, `mcp#<serverId>` for a paid MCP server. */
export type SubscriptionSubject = 'plan' | `mcp#${string}`;

export interface BillingAccount {
  readonly userId: string;
  /** Idempotency key of the customer's creation: every concurrent caller sends the same one. */
  readonly customerKey?: string;
  readonly stripeCustomerId?: string;
  readonly connectKey?: string;
  readonly connectAccountId?: string;
}

export interface SubscriptionRecord {
  readonly userId: string;
  readonly subject: SubscriptionSubject;
  readonly stripeSubscriptionId: string;
  /** Stripe's status (`active`, `trialing`, `past_due`, `canceled`, ...). */
  readonly status: string;
  readonly tier?: Tier;
  /** Epoch seconds. */
  readonly currentPeriodEnd: number | null;
  readonly cancelAtPeriodEnd: boolean;
  readonly updatedAt: number;
}

/** One money movement, in cents. Never changed once written, but for a payout's `transferId`. */
export interface MoneyEntry {
  readonly authorId: string;
  /** `earn#<invoiceId>`, `payout#<n>`, `reversal#<n>`: deterministic, so a replay writes nothing. */
  readonly entryId: string;
  readonly kind: 'earning' | 'payout' | 'payout-reversal';
  /** Earnings: what the subscriber paid; payouts: what was sent (reversals: given back, positive). */
  readonly grossCents: number;
  readonly feeCents: number;
  readonly netCents: number;
  readonly resourceId: string | null;
  readonly subscriberId: string | null;
  /** `YYYY-MM` (UTC) the money belongs to. */
  readonly month: string;
  readonly transferId?: string;
  readonly createdAt: number;
}

export interface BillingStore {
  getAccount(userId: string): Promise<BillingAccount | null>;
  /** Claims the account's customer-creation key; the claim already there when another caller won. */
  claimCustomerKey(userId: string, key: string): Promise<string>;
  setCustomerId(userId: string, customerId: string): Promise<string>;
  claimConnectKey(userId: string, key: string): Promise<string>;
  setConnectAccountId(userId: string, accountId: string): Promise<string>;
  getSubscription(userId: string, subject: SubscriptionSubject): Promise<SubscriptionRecord | null>;
  putSubscription(record: SubscriptionRecord): Promise<void>;
  /** Subscriptions to one subject (a server's subscribers). */
  subscribersOf(subject: SubscriptionSubject): Promise<SubscriptionRecord[]>;
  /** True when this call claimed the event; false when it was claimed (processed or in progress) before. */
  claimEvent(eventId: string, type: string): Promise<boolean>;
  completeEvent(eventId: string): Promise<void>;
  releaseEvent(eventId: string): Promise<void>;
  /** Appends an entry; false when an entry with its id exists (the replay of a movement already recorded). */
  appendMoney(entry: MoneyEntry): Promise<boolean>;
  setTransferId(authorId: string, entryId: string, transferId: string): Promise<void>;
  moneyEntries(authorId: string): Promise<MoneyEntry[]>;
  /** Takes `calls` of the caller's free trial of a server: false (nothing taken) when fewer than that are left. */
  takeTrialCalls(serverId: string, callerId: string, calls: number, quota: number): Promise<boolean>;
  trialCallsUsed(serverId: string, callerId: string): Promise<number>;
  /** Callers who used a server's trial. */
  trialUsers(serverId: string): Promise<number>;
}

/** A claim older than this whose processing never finished (a crash) may be taken again. */
const STALE_EVENT_CLAIM_MS = 5 * 60_000;

/** What the MCP endpoint reads and writes of billing (paid-access.ts): a paid server's subscriptions and trials, nothing else. */
export type PaidAccessStore = Pick<BillingStore, 'getSubscription' | 'takeTrialCalls'>;

export function createBillingStore(db: Db, clock: Clock): BillingStore {
  const accounts = db.table('billing-accounts');
  const subscriptions = db.table('billing-subscriptions');
  const events = db.table('billing-events');
  const money = db.table('money-ledger');
  const trials = db.table('mcp-trials');

  async function claimOnce(userId: string, attribute: 'customerKey' | 'connectKey', key: string): Promise<string> {
    const out = await sendIf(
      db.doc.send(
        new UpdateCommand({
          TableName: accounts,
          Key: { userId },
          UpdateExpression: 'SET #k = :k',
          ConditionExpression: 'attribute_not_exists(#k)',
          ExpressionAttributeNames: { '#k': attribute },
          ExpressionAttributeValues: { ':k': key },
        }),
      ),
    );
    if (out !== null) return key;
    const read = await db.doc.send(new GetCommand({ TableName: accounts, Key: { userId }, ConsistentRead: true }));
    return String(read.Item?.[attribute]);
  }

  async function setOnce(userId: string, attribute: 'stripeCustomerId' | 'connectAccountId', value: string): Promise<string> {
    const applied = await writeIf(
      db.doc.send(
        new UpdateCommand({
          TableName: accounts,
          Key: { userId },
          UpdateExpression: 'SET #a = :v',
          ConditionExpression: 'attribute_not_exists(#a) OR #a = :v',
          ExpressionAttributeNames: { '#a': attribute },
          ExpressionAttributeValues: { ':v': value },
        }),
      ),
    );
    if (applied) return value;
    const read = await db.doc.send(new GetCommand({ TableName: accounts, Key: { userId }, ConsistentRead: true }));
    return String(read.Item?.[attribute]);
  }

  async function queryAll<T>(input: ConstructorParameters<typeof QueryCommand>[0]): Promise<T[]> {
    const items: T[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await db.doc.send(new QueryCommand({ ...input, ...(start ? { ExclusiveStartKey: start } : {}) }));
      items.push(...((out.Items ?? []) as T[]));
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    return items;
  }

  return {
    async getAccount(userId) {
      const out = await db.doc.send(new GetCommand({ TableName: accounts, Key: { userId }, ConsistentRead: true }));
      return (out.Item as BillingAccount | undefined) ?? null;
    },
    claimCustomerKey: (userId, key) => claimOnce(userId, 'customerKey', key),
    setCustomerId: (userId, id) => setOnce(userId, 'stripeCustomerId', id),
    claimConnectKey: (userId, key) => claimOnce(userId, 'connectKey', key),
    setConnectAccountId: (userId, id) => setOnce(userId, 'connectAccountId', id),
    async getSubscription(userId, subject) {
      const out = await db.doc.send(new GetCommand({ TableName: subscriptions, Key: { userId, subject }, ConsistentRead: true }));
      return (out.Item as SubscriptionRecord | undefined) ?? null;
    },
    async putSubscription(record) {
      await db.doc.send(new PutCommand({ TableName: subscriptions, Item: record }));
    },
    subscribersOf(subject) {
      return queryAll<SubscriptionRecord>({
        TableName: subscriptions,
        IndexName: 'bySubject',
        KeyConditionExpression: 'subject = :s',
        ExpressionAttributeValues: { ':s': subject },
      });
    },
    async claimEvent(eventId, type) {
      const now = clock.now();
      return writeIf(
        db.doc.send(
          new PutCommand({
            TableName: events,
            Item: { eventId, type, state: 'processing', claimedAt: now },
            ConditionExpression: 'attribute_not_exists(eventId) OR (#s = :processing AND claimedAt < :stale)',
            ExpressionAttributeNames: { '#s': 'state' },
            ExpressionAttributeValues: { ':processing': 'processing', ':stale': now - STALE_EVENT_CLAIM_MS },
          }),
        ),
      );
    },
    async completeEvent(eventId) {
      await db.doc.send(
        new UpdateCommand({
          TableName: events,
          Key: { eventId },
          UpdateExpression: 'SET #s = :done, doneAt = :now',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':done': 'done', ':now': clock.now() },
        }),
      );
    },
    async releaseEvent(eventId) {
      await db.doc
        .send(
          new DeleteCommand({
            TableName: events,
            Key: { eventId },
            ConditionExpression: '#s = :processing',
            ExpressionAttributeNames: { '#s': 'state' },
            ExpressionAttributeValues: { ':processing': 'processing' },
          }),
        )
        .catch(() => undefined);
    },
    appendMoney(entry) {
      return writeIf(db.doc.send(new PutCommand({ TableName: money, Item: entry, ConditionExpression: 'attribute_not_exists(entryId)' })));
    },
    async setTransferId(authorId, entryId, transferId) {
      await db.doc.send(
        new UpdateCommand({
          TableName: money,
          Key: { authorId, entryId },
          UpdateExpression: 'SET transferId = :t',
          ConditionExpression: 'attribute_exists(entryId) AND attribute_not_exists(transferId)',
          ExpressionAttributeValues: { ':t': transferId },
        }),
      );
    },
    moneyEntries(authorId) {
      return queryAll<MoneyEntry>({
        TableName: money,
        KeyConditionExpression: 'authorId = :a',
        ExpressionAttributeValues: { ':a': authorId },
        ConsistentRead: true,
      });
    },
    async takeTrialCalls(serverId, callerId, calls, quota) {
      if (calls <= 0) return true;
      if (calls > quota) return false;
      // One conditional ADD: concurrent callers can never take more than the quota between them.
      return writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: trials,
            Key: { serverId, callerId },
            UpdateExpression: 'ADD used :n',
            ConditionExpression: 'attribute_not_exists(used) OR used <= :max',
            ExpressionAttributeValues: { ':n': calls, ':max': quota - calls },
          }),
        ),
      );
    },
    async trialCallsUsed(serverId, callerId) {
      const out = await db.doc.send(new GetCommand({ TableName: trials, Key: { serverId, callerId }, ConsistentRead: true }));
      return Number(out.Item?.['used'] ?? 0);
    },
    async trialUsers(serverId) {
      const items = await queryAll<{ used: number }>({
        TableName: trials,
        KeyConditionExpression: 'serverId = :s',
        ExpressionAttributeValues: { ':s': serverId },
      });
      return items.filter((item) => Number(item.used) > 0).length;
    },
  };
}
