/**
 * The billing rules on real conditional writes (dynalite): a plan period's credits granted once
 * under concurrent and replayed events, free-trial calls never exceeding the quota under
 * concurrency, an event claimed once, the earnings arithmetic in cents, and the plans' table.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBillingStore, type BillingStore, type MoneyEntry } from '../../functions/billing/billing.store.ts';
import { summarize } from '../../functions/billing/earnings.service.ts';
import { createCredits, type Credits } from '../../functions/core/credits.ts';
import { planLimits, tierOf } from '../../functions/core/plans.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';

const clock = { now: () => Date.now() };

describe('billing rules', () => {
  let local: LocalDb;
  let credits: Credits;
  let store: BillingStore;
  let n = 0;

  async function account(balance = 0): Promise<string> {
    const userId = `usr_rules_${++n}`;
    await local.db.doc.send(new PutCommand({ TableName: local.db.table('users'), Item: { userId, credits: balance, status: 'active', createdAt: 0 } }));
    return userId;
  }
  const balanceOf = async (userId: string) => (await credits.recentEntries(userId, 1))[0]?.balanceAfter ?? 0;

  beforeAll(async () => {
    local = await startLocalDb();
    credits = createCredits(local.db, clock);
    store = createBillingStore(local.db, clock);
  });
  afterAll(async () => {
    await local.stop();
  });

  it("grants a paid period's credits once when its events arrive together, replayed, or late", async () => {
    // Prepare
    const userId = await account(10);
    const period = { tier: 'starter' as const, credits: 2000, reason: 'starter plan', requestId: null };
    // Act: the checkout, subscription and invoice events of one period at once, then an older one, then the next.
    const granted = await Promise.all(Array.from({ length: 12 }, () => credits.grantPlanPeriod(userId, { ...period, periodStart: 1_000 })));
    const older = await credits.grantPlanPeriod(userId, { ...period, tier: 'professional', periodStart: 500 });
    const tierAfterOlder = tierOf((await local.db.doc.send(new GetCommand({ TableName: local.db.table('users'), Key: { userId } }))).Item);
    const next = await credits.grantPlanPeriod(userId, { ...period, periodStart: 2_000 });
    // Assess
    expect(granted.filter((g) => g !== null)).toHaveLength(1);
    expect(older).toBeNull();
    expect(tierAfterOlder).toBe('starter');
    expect(next?.amount).toBe(2000);
    expect(await balanceOf(userId)).toBe(10 + 2 * 2000);
  });

  it('sets the tier on the account item, where tierOf reads it', async () => {
    // Prepare
    const userId = await account();
    // Act
    await credits.setTier(userId, 'professional');
    const item = (await local.db.doc.send(new GetCommand({ TableName: local.db.table('users'), Key: { userId } }))).Item;
    // Assess
    expect(tierOf(item)).toBe('professional');
    expect(tierOf({ account: { item: item! } })).toBe('professional');
    expect(tierOf({ tier: 'gold' })).toBe('free');
    await expect(credits.setTier('usr_missing', 'starter')).rejects.toThrow(/not found/i);
  });

  it('never takes more free-trial calls than the quota under concurrency, batches included', async () => {
    // Act: 30 single calls and 10 batches of 2 against a quota of 7.
    const singles = Promise.all(Array.from({ length: 30 }, () => store.takeTrialCalls('mcp-trial1', 'usr_a', 1, 7)));
    const batches = Promise.all(Array.from({ length: 10 }, () => store.takeTrialCalls('mcp-trial1', 'usr_a', 2, 7)));
    const [one, two] = await Promise.all([singles, batches]);
    const taken = one.filter(Boolean).length + 2 * two.filter(Boolean).length;
    // Assess
    expect(taken).toBe(await store.trialCallsUsed('mcp-trial1', 'usr_a'));
    expect(taken).toBeLessThanOrEqual(7);
    expect(taken).toBeGreaterThanOrEqual(6); // a batch of 2 may not fit the last one
    expect(await store.takeTrialCalls('mcp-trial1', 'usr_b', 8, 7)).toBe(false);
    expect(await store.trialCallsUsed('mcp-trial1', 'usr_b')).toBe(0);
    expect(await store.trialUsers('mcp-trial1')).toBe(1);
  });

  it('claims a webhook event once, and again only after a failed processing released it', async () => {
    // Act
    const claims = await Promise.all(Array.from({ length: 8 }, () => store.claimEvent('evt_rules_1', 'invoice.paid')));
    await store.releaseEvent('evt_rules_1');
    const retried = await store.claimEvent('evt_rules_1', 'invoice.paid');
    await store.completeEvent('evt_rules_1');
    await store.releaseEvent('evt_rules_1');
    const afterDone = await store.claimEvent('evt_rules_1', 'invoice.paid');
    // Assess
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(retried).toBe(true);
    expect(afterDone).toBe(false);
  });

  it('appends a money movement once, and sums earnings, fees, payouts and reversals in whole cents', async () => {
    // Prepare
    const entry = (
      entryId: string,
      kind: MoneyEntry['kind'],
      gross: number,
      fee: number,
      month = '2026-10',
      resourceId: string | null = 'mcp-a',
    ): MoneyEntry => ({
      authorId: 'usr_author',
      entryId,
      kind,
      grossCents: gross,
      feeCents: fee,
      netCents: gross - fee,
      resourceId,
      subscriberId: null,
      month,
      createdAt: 0,
    });
    // Act
    const first = await store.appendMoney(entry('earn#in_1', 'earning', 999, 200));
    const replay = await store.appendMoney(entry('earn#in_1', 'earning', 999, 200));
    await store.appendMoney(entry('earn#in_2', 'earning', 50, 10, '2026-11', 'mcp-b'));
    await store.appendMoney(entry('payout#000000', 'payout', 700, 0, '2026-11', null));
    await store.appendMoney(entry('reversal#000000', 'payout-reversal', 700, 0, '2026-11', null));
    await store.appendMoney(entry('payout#000001', 'payout', 839, 0, '2026-11', null));
    const summary = summarize(await store.moneyEntries('usr_author'));
    // Assess
    expect([first, replay]).toEqual([true, false]);
    expect(summary.totals).toEqual({ grossCents: 1049, platformFeeCents: 210, netCents: 839, paidOutCents: 839, availableCents: 0 });
    expect(summary.byMonth.map((m) => m.month)).toEqual(['2026-11', '2026-10']);
    expect(summary.byResource).toEqual([
      { resourceId: 'mcp-a', grossCents: 999, platformFeeCents: 200, netCents: 799 },
      { resourceId: 'mcp-b', grossCents: 50, platformFeeCents: 10, netCents: 40 },
    ]);
  });

  it('defines the plans once: quotas of SPEC part 8, code servers from starter up, credits from settings', () => {
    // Assess
    expect(planLimits('free')).toEqual({ monthlyCredits: 0, websiteQuotaMb: 50, codeServer: false });
    expect(planLimits('starter')).toEqual({ monthlyCredits: 2000, websiteQuotaMb: 1024, codeServer: true });
    expect(planLimits('professional', { PLAN_PROFESSIONAL_MONTHLY_CREDITS: 7 })).toEqual({ monthlyCredits: 7, websiteQuotaMb: 10240, codeServer: true });
    expect(planLimits('free', { WEBSITE_FREE_QUOTA_MB: 3, MONTHLY_FREE_CREDITS: 100 })).toMatchObject({ websiteQuotaMb: 3, monthlyCredits: 100 });
    expect(tierOf(null)).toBe('free');
  });
});
