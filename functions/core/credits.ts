import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from './clock.ts';
import { queryItems, sendIf, writeIf, type Db } from './db/dynamo.ts';
import { InsufficientCreditsError, NotFoundError, ValidationError } from './errors.ts';
import { sortableId } from './ids.ts';
import type { Tier } from './plans.ts';

export interface LedgerEntry {
  readonly userId: string;
  readonly entryId: string;
  /** Positive for grants, negative for debits. */
  readonly amount: number;
  readonly balanceAfter: number;
  readonly reason: string;
  readonly requestId: string | null;
  readonly createdAt: number;
}

export interface CreditChange {
  readonly reason: string;
  readonly requestId: string | null;
}

/**
 * What the caller already read of the account in this request (auth's read, `UserActor.account`).
 * The month of the last grant only moves forward, so a read showing this month's grant stays
 * true: the grant's conditional write, which could only fail, is skipped.
 */
export interface GrantSeen {
  readonly grantMonth: string | null;
}

/**
 * The credit balance and its ledger. A debit is one conditional update (`credits >= cost`), so
 * concurrent runs can never take a balance below zero; every change then appends a ledger entry.
 */
/** A debit whose balance change is done and whose ledger line is still being written. */
export interface PendingDebit {
  readonly balanceAfter: number;
  /**
   * The ledger line's write. The caller must await it before it answers (a Lambda may be frozen
   * after the answer, and the line would be lost): a failure rejects here, as `debit` would have.
   */
  readonly line: Promise<LedgerEntry>;
}

export interface Credits {
  /** Throws `InsufficientCreditsError` (402) when the balance is short. Applies the monthly grant first. */
  debit(userId: string, amount: number, change: CreditChange, seen?: GrantSeen): Promise<LedgerEntry>;
  /**
   * `debit` answering as soon as the balance moved, its ledger line in flight (`line`): the caller
   * starts what the credits pay for (a run) together with the line's write rather than after it.
   */
  debitWithPendingLine(userId: string, amount: number, change: CreditChange, seen?: GrantSeen): Promise<PendingDebit>;
  grant(userId: string, amount: number, change: CreditChange): Promise<LedgerEntry>;
  /**
   * Adds this calendar month's free credits (UTC) unless the account already had them: one
   * conditional update on `grantMonth`, so concurrent calls grant once. Null when nothing was added.
   */
  applyMonthlyGrant(userId: string, seen?: GrantSeen): Promise<LedgerEntry | null>;
  /** Whether an account read showing `seen` has this month's free credits (always, when none are given). */
  grantIsCurrent(seen: GrantSeen): boolean;
  /** Newest ledger entries first. */
  recentEntries(userId: string, limit: number): Promise<LedgerEntry[]>;
  readonly monthlyGrant: number;
  /** Sets the account's plan (`tier` on its item, which auth's read carries); NotFoundError when there is no account. */
  setTier(userId: string, tier: Tier): Promise<void>;
  /**
   * Sets the plan and grants its credits for the paid period starting at `periodStart` (epoch
   * seconds), once: one conditional update moving `planPeriodStart` forward, so a replayed or late
   * event for the same or an older period grants nothing (an event of the same period still sets
   * the tier; an older period's changes nothing). Null when nothing was granted.
   */
  grantPlanPeriod(userId: string, plan: PlanPeriod): Promise<LedgerEntry | null>;
}

export interface PlanPeriod {
  readonly tier: Tier;
  /** Start of the paid period, epoch seconds (Stripe's `current_period_start`). */
  readonly periodStart: number;
  readonly credits: number;
  readonly reason: string;
  readonly requestId: string | null;
}

/**
 * 402 with a message that says what the credits were for (a run's worst case, the next stretch of
 * a metered run) rather than "this call costs": the amount refused is not what the call costs.
 */
export class CreditsRefusedError extends InsufficientCreditsError {
  constructor(required: number, available: number, message: string) {
    super(required, available);
    this.message = message;
  }
}

/**
 * What one credit is worth, in USD: the rate at which the platform turns what a resource costs it
 * (a CloudFront invalidation path) into credits. Documented in docs/guide.md (Credits).
 */
export const CREDIT_PRICE_USD = 0.01;

/** Credits are kept to 4 decimal places so per-second billing adds up exactly in DynamoDB. */
export function roundCredits(amount: number): number {
  return Math.round(amount * 10_000) / 10_000;
}

export function createCredits(db: Db, clock: Clock, monthlyGrant = 0): Credits {
  const users = db.table('users');
  const ledger = db.table('credit-ledger');

  async function record(userId: string, amount: number, balanceAfter: number, change: CreditChange): Promise<LedgerEntry> {
    const now = clock.now();
    const entry: LedgerEntry = {
      userId,
      entryId: sortableId('led_', now),
      amount,
      balanceAfter,
      reason: change.reason,
      requestId: change.requestId,
      createdAt: now,
    };
    // Written after the balance moved: a crash in between loses a ledger line, never credits.
    await db.doc.send(new PutCommand({ TableName: ledger, Item: entry }));
    return entry;
  }

  function checkAmount(amount: number): number {
    const rounded = roundCredits(amount);
    if (!Number.isFinite(amount) || rounded <= 0) throw new ValidationError('Invalid credit amount', ['amount: must be a positive number']);
    return rounded;
  }

  const currentMonth = () => new Date(clock.now()).toISOString().slice(0, 7);
  const grantIsCurrent = (seen: GrantSeen) => monthlyGrant <= 0 || seen.grantMonth === currentMonth();

  async function applyMonthlyGrant(userId: string, seen?: GrantSeen): Promise<LedgerEntry | null> {
    if (monthlyGrant <= 0 || (seen !== undefined && grantIsCurrent(seen))) return null;
    const month = currentMonth();
    const out = await sendIf(
      db.doc.send(
        new UpdateCommand({
          TableName: users,
          Key: { userId },
          UpdateExpression: 'SET credits = credits + :g, grantMonth = :m',
          ConditionExpression: 'attribute_exists(userId) AND #s = :active AND (attribute_not_exists(grantMonth) OR grantMonth <> :m)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':g': monthlyGrant, ':m': month, ':active': 'active' },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    if (out === null) return null;
    return record(userId, monthlyGrant, Number(out.Attributes?.['credits']), { reason: `monthly free credits ${month}`, requestId: null });
  }

  /** The debit's balance change (the grant first when due): the balance after it. */
  async function take(userId: string, amount: number, seen: GrantSeen | undefined): Promise<number> {
    const cost = checkAmount(amount);
    await applyMonthlyGrant(userId, seen);
    const out = await sendIf(
      db.doc.send(
        new UpdateCommand({
          TableName: users,
          Key: { userId },
          UpdateExpression: 'SET credits = credits - :cost',
          ConditionExpression: 'attribute_exists(userId) AND credits >= :cost',
          ExpressionAttributeValues: { ':cost': cost },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    if (out !== null) return Number(out.Attributes?.['credits']);
    // Read only on refusal, to say what the balance was; the refusal itself came from the condition.
    const current = await db.doc.send(new GetCommand({ TableName: users, Key: { userId }, ProjectionExpression: 'credits' }));
    if (current.Item === undefined) throw new NotFoundError('Account not found.');
    throw new InsufficientCreditsError(cost, Number(current.Item['credits'] ?? 0));
  }

  async function setTier(userId: string, tier: Tier): Promise<void> {
    const applied = await writeIf(
      db.doc.send(
        new UpdateCommand({
          TableName: users,
          Key: { userId },
          UpdateExpression: 'SET tier = :t',
          ConditionExpression: 'attribute_exists(userId)',
          ExpressionAttributeValues: { ':t': tier },
        }),
      ),
    );
    if (!applied) throw new NotFoundError('Account not found.');
  }

  async function grantPlanPeriod(userId: string, plan: PlanPeriod): Promise<LedgerEntry | null> {
    const credits = roundCredits(plan.credits);
    const out = await sendIf(
      db.doc.send(
        new UpdateCommand({
          TableName: users,
          Key: { userId },
          UpdateExpression: 'SET credits = credits + :g, tier = :t, planPeriodStart = :p',
          ConditionExpression: 'attribute_exists(userId) AND (attribute_not_exists(planPeriodStart) OR planPeriodStart < :p)',
          ExpressionAttributeValues: { ':g': Math.max(0, credits), ':t': plan.tier, ':p': plan.periodStart },
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    if (out === null) {
      // This period was granted already: a change within it (a new price) still sets the tier; an older period's late event does not.
      await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: users,
            Key: { userId },
            UpdateExpression: 'SET tier = :t',
            ConditionExpression: 'attribute_exists(userId) AND planPeriodStart = :p',
            ExpressionAttributeValues: { ':t': plan.tier, ':p': plan.periodStart },
          }),
        ),
      );
      return null;
    }
    if (credits <= 0) return null;
    return record(userId, credits, Number(out.Attributes?.['credits']), { reason: plan.reason, requestId: plan.requestId });
  }

  return {
    monthlyGrant,
    applyMonthlyGrant,
    setTier,
    grantPlanPeriod,
    grantIsCurrent,
    recentEntries(userId, limit) {
      return queryItems<LedgerEntry>(
        db,
        { TableName: ledger, KeyConditionExpression: 'userId = :u', ExpressionAttributeValues: { ':u': userId }, ScanIndexForward: false },
        limit,
      );
    },
    async debit(userId, amount, change, seen) {
      const balanceAfter = await take(userId, amount, seen);
      return record(userId, -checkAmount(amount), balanceAfter, change);
    },
    async debitWithPendingLine(userId, amount, change, seen) {
      const balanceAfter = await take(userId, amount, seen);
      const line = record(userId, -checkAmount(amount), balanceAfter, change);
      // The caller awaits it; until then a failure must not count as unhandled.
      line.catch(() => undefined);
      return { balanceAfter, line };
    },
    async grant(userId, amount, change) {
      const value = checkAmount(amount);
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: users,
            Key: { userId },
            UpdateExpression: 'SET credits = credits + :v',
            ConditionExpression: 'attribute_exists(userId)',
            ExpressionAttributeValues: { ':v': value },
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      if (out === null) throw new NotFoundError('Account not found.');
      return record(userId, value, Number(out.Attributes?.['credits']), change);
    },
  };
}
