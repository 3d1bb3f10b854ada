/**
 * The invalidation allowance and its billing (SPEC part 8: the first 1,000 paths a month are free)
 * in the websites service, on the real store and credits (dynalite): the month's count is taken as
 * the store keeps it, without 1,000 real calls, by counting paths as earlier requests would have.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { createCredits } from '../../functions/core/credits.ts';
import type { Db } from '../../functions/core/db/dynamo.ts';
import { InsufficientCreditsError } from '../../functions/core/errors.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { createLocalSiteCache, type SiteCache } from '../../functions/websites/site-cache.ts';
import {
  billablePaths,
  CREDITS_PER_INVALIDATION_PATH,
  FREE_INVALIDATION_PATHS_PER_MONTH,
  invalidateCache,
  type WebsitePorts,
} from '../../functions/websites/websites.service.ts';
import { createWebsiteStore } from '../../functions/websites/websites.store.ts';
import { SteppableClock } from '../support/local-platform.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';

describe('website invalidation billing on dynalite', () => {
  let local: LocalDb;
  let db: Db;
  let clock: SteppableClock;
  let users = 0;

  beforeAll(async () => {
    local = await startLocalDb();
    db = local.db;
    clock = new SteppableClock();
  });
  afterAll(() => local.stop());

  function portsWith(siteCache: SiteCache = createLocalSiteCache()): WebsitePorts {
    return {
      websiteStore: createWebsiteStore(db, () => clock.now()),
      websiteObjects: undefined as never,
      siteCache,
      credits: createCredits(db, clock),
      clock,
      log: createLogger('silent', {}),
      config: { WEBSITE_FREE_QUOTA_MB: 50 },
    };
  }

  async function newOwner(credits: number): Promise<UserActor> {
    const userId = `usr_billing_${++users}`;
    await db.doc.send(new PutCommand({ TableName: db.table('users'), Item: { userId, alias: `billing-${users}`, credits, status: 'active' } }));
    return { kind: 'user', userId, alias: `billing-${users}`, isAdmin: false, via: 'user-token', tokenId: null, scope: 'full', roleKeys: null };
  }

  const balanceOf = async (userId: string) =>
    (await db.doc.send(new GetCommand({ TableName: db.table('users'), Key: { userId }, ConsistentRead: true }))).Item?.['credits'] as number;
  const month = () => new Date(clock.now()).toISOString().slice(0, 7);
  const paths = (n: number, tag = 'p') => Array.from({ length: n }, (_, i) => `/${tag}${i}.html`);
  const lineage = (requestId: string) => lineageOf(requestId, undefined);

  it('charges nothing within the allowance, then CREDITS_PER_INVALIDATION_PATH for each path past it', async () => {
    // Prepare: 990 paths already invalidated this month
    const ports = portsWith();
    const owner = await newOwner(100);
    await ports.websiteStore.countInvalidationPaths(owner.userId, month(), FREE_INVALIDATION_PATHS_PER_MONTH - 10);

    // Act
    const within = await invalidateCache(owner, { paths: paths(10) }, ports, lineage('r1'));
    const past = await invalidateCache(owner, { paths: paths(20, 'q') }, ports, lineage('r2'));

    // Assess
    expect(within.creditsCharged).toBe(0);
    expect(past.creditsCharged).toBe(20 * CREDITS_PER_INVALIDATION_PATH);
    expect(CREDITS_PER_INVALIDATION_PATH).toBe(0.5);
    expect(await balanceOf(owner.userId)).toBe(100 - 10);
  });

  it('lets concurrent requests straddling the allowance pay together for exactly the paths past it', async () => {
    // Prepare: 995 used; five requests of 4 paths each bring the month to 1,015
    const ports = portsWith();
    const owner = await newOwner(100);
    await ports.websiteStore.countInvalidationPaths(owner.userId, month(), FREE_INVALIDATION_PATHS_PER_MONTH - 5);

    // Act
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => invalidateCache(owner, { paths: paths(4, `c${i}-`) }, ports, lineage(`c${i}`))));

    // Assess
    const charged = answers.reduce((sum, a) => sum + a.creditsCharged, 0);
    expect(charged).toBe(15 * CREDITS_PER_INVALIDATION_PATH);
    expect(await balanceOf(owner.userId)).toBe(100 - 15 * CREDITS_PER_INVALIDATION_PATH);
  });

  it('starts each calendar month with the allowance again', async () => {
    // Prepare
    const ports = portsWith();
    const owner = await newOwner(100);
    await ports.websiteStore.countInvalidationPaths(owner.userId, month(), FREE_INVALIDATION_PATHS_PER_MONTH);
    const before = await invalidateCache(owner, { paths: paths(2) }, ports, lineage('m1'));

    // Act
    clock.advance(32 * 24 * 3600 * 1000);
    const after = await invalidateCache(owner, { paths: paths(2) }, ports, lineage('m2'));

    // Assess
    expect(before.creditsCharged).toBe(1);
    expect(after.creditsCharged).toBe(0);
  });

  it('refuses with 402 and gives the paths back when the balance is short, and refunds a failed invalidation', async () => {
    // Prepare
    const owner = await newOwner(1);
    const failing: SiteCache = { invalidate: () => Promise.reject(new Error('CloudFront unavailable')) };
    const ports = portsWith();
    await ports.websiteStore.countInvalidationPaths(owner.userId, month(), FREE_INVALIDATION_PATHS_PER_MONTH);

    // Act
    const short = invalidateCache(owner, { paths: paths(4) }, ports, lineage('s1'));
    await expect(short).rejects.toBeInstanceOf(InsufficientCreditsError);
    const failed = invalidateCache(owner, { paths: paths(2) }, portsWith(failing), lineage('s2'));
    await expect(failed).rejects.toThrow('CloudFront unavailable');
    const count = await ports.websiteStore.countInvalidationPaths(owner.userId, month(), 0);

    // Assess
    expect(count).toBe(FREE_INVALIDATION_PATHS_PER_MONTH);
    expect(await balanceOf(owner.userId)).toBe(1);
  });

  it('bills each request for its own paths past the allowance (billablePaths)', () => {
    // Assess
    expect(billablePaths(999, 1)).toBe(0);
    expect(billablePaths(1000, 1)).toBe(0);
    expect(billablePaths(1001, 1)).toBe(1);
    expect(billablePaths(1003, 5)).toBe(3);
    expect(billablePaths(5000, 5)).toBe(5);
  });
});
