/**
 * Plans, Stripe, paid MCP servers and author earnings over HTTP (issue 35), against a loopback
 * Stripe stand-in that speaks Stripe's wire format and records what it received, with webhook
 * events signed by the official library's test helper (never our own HMAC).
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { startStripeStandIn, type StripeStandIn } from '../support/stripe-stand-in.ts';

const SECRET_KEY = 'sk_test_stand_in_key';
const WEBHOOK_SECRET = 'whsec_test_stand_in_secret';
const STARTER_CREDITS = 2000;
const PRO_CREDITS = 10000;

const MCP_SOURCE = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'paid', version: '1.0.0' });
  server.registerTool('ping', { description: 'Answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
  return server;
};
`;

type User = { userId: string; token: string };

describe('billing with Stripe', () => {
  let platform: TestPlatform;
  let stripe: StripeStandIn;
  let eventSeq = 0;

  /** Posts a Stripe event to the webhook, signed with the library's test helper at the platform's time. */
  async function deliver(type: string, object: Record<string, unknown>, options: { id?: string; secret?: string } = {}) {
    const event = {
      id: options.id ?? `evt_test_${++eventSeq}_${Date.now()}`,
      object: 'event',
      type,
      api_version: '2026-10-28.endive',
      created: 0,
      data: { object },
    };
    const payload = JSON.stringify(event);
    const header = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: options.secret ?? WEBHOOK_SECRET,
      timestamp: Math.floor(platform.clock.now() / 1000),
    });
    const res = await platform.api('POST', '/stripe/webhook', {
      rawBody: payload,
      headers: { 'stripe-signature': header, 'content-type': 'application/json' },
    });
    return { res, event };
  }

  const credits = async (user: User) => (await platform.api('GET', '/user/credits', { token: user.token })).body.data.credits as number;
  const subscription = async (user: User) => (await platform.api('GET', '/user/subscription', { token: user.token })).body.data;

  /** A subscription as Stripe holds it (API 2025-03 and later: the period on its items). */
  function stripeSubscription(id: string, metadata: Record<string, string>, price: string, start: number, status = 'active') {
    const sub = {
      id,
      object: 'subscription',
      status,
      cancel_at_period_end: false,
      metadata,
      items: {
        object: 'list',
        data: [
          {
            id: `si_${id}`,
            object: 'subscription_item',
            price: { id: price, object: 'price' },
            current_period_start: start,
            current_period_end: start + 30 * 86400,
          },
        ],
      },
    };
    stripe.subscriptions.set(id, sub);
    return sub;
  }

  function invoice(id: string, subscriptionId: string, metadata: Record<string, string>, start: number, amountPaid: number) {
    return {
      id,
      object: 'invoice',
      amount_paid: amountPaid,
      period_start: start,
      period_end: start + 30 * 86400,
      parent: { type: 'subscription_details', subscription_details: { subscription: subscriptionId, metadata } },
      lines: { object: 'list', data: [{ id: `il_${id}`, object: 'line_item', period: { start, end: start + 30 * 86400 } }] },
    };
  }

  beforeAll(async () => {
    stripe = await startStripeStandIn(SECRET_KEY);
    platform = await startTestPlatform({
      env: {
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_STARTER: 'price_starter_test',
        STRIPE_PRICE_PROFESSIONAL: 'price_pro_test',
        STRIPE_API_BASE: stripe.url,
        PLAN_STARTER_MONTHLY_CREDITS: String(STARTER_CREDITS),
        PLAN_PROFESSIONAL_MONTHLY_CREDITS: String(PRO_CREDITS),
        PAID_MCP_PLATFORM_FEE_PERCENT: '20',
        PAYOUT_MINIMUM_CENTS: '1000',
      },
    });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await stripe.close();
  });

  describe('plans', () => {
    it('opens Checkout in subscription mode with the configured price, sending Stripe a form-encoded request', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'planner', email: 'planner@example.com' });
      // Act
      const res = await platform.api('POST', '/subscription/checkout', { token: user.token, body: { tier: 'starter' } });
      // Assess: the answer, then the requests as Stripe received them.
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ url: expect.stringMatching(/^https:\/\/checkout\.stripe\.com\//), sessionId: expect.stringMatching(/^cs_test_/) });
      const [customer] = stripe.requestsTo('POST', '/v1/customers').filter((r) => (r.form['metadata'] as Record<string, string>)['userId'] === user.userId);
      expect(customer).toMatchObject({
        contentType: 'application/x-www-form-urlencoded',
        authorization: `Bearer ${SECRET_KEY}`,
        form: { email: 'planner@example.com' },
      });
      expect(customer!.idempotencyKey).toMatch(/^customer-/);
      const session = stripe.requestsTo('POST', '/v1/checkout/sessions').at(-1)!;
      expect(session.form).toMatchObject({
        mode: 'subscription',
        line_items: [{ price: 'price_starter_test', quantity: '1' }],
        metadata: { userId: user.userId, kind: 'plan', tier: 'starter' },
        subscription_data: { metadata: { userId: user.userId, kind: 'plan', tier: 'starter' } },
      });
      expect(String(session.form['customer'])).toMatch(/^cus_/);
      expect(session.idempotencyKey).toBeDefined();
    });

    it('refuses a tier that is not a paid one with 400 naming the field', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'badtier' });
      // Act
      const free = await platform.api('POST', '/subscription/checkout', { token: user.token, body: { tier: 'free' } });
      const none = await platform.api('POST', '/subscription/checkout', { token: user.token, body: {} });
      // Assess
      expect(free.status).toBe(400);
      expect(free.body.error).toMatch(/tier/);
      expect(none.status).toBe(400);
    });

    it('creates one Stripe customer per user when checkout and portal are called concurrently', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'concurrent' });
      // Act
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          i % 2 === 0
            ? platform.api('POST', '/subscription/checkout', { token: user.token, body: { tier: 'professional' } })
            : platform.api('POST', '/subscription/portal', { token: user.token }),
        ),
      );
      // Assess: every call succeeded, Stripe was asked with one key, and made one customer.
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
      const asked = stripe.requestsTo('POST', '/v1/customers').filter((r) => (r.form['metadata'] as Record<string, string>)['userId'] === user.userId);
      expect(new Set(asked.map((r) => r.idempotencyKey)).size).toBe(1);
      const made = [...stripe.objects.values()].filter(
        (o) => o['object'] === 'customer' && (o['metadata'] as Record<string, string>)['userId'] === user.userId,
      );
      expect(made).toHaveLength(1);
      const used = new Set([
        ...stripe.requestsTo('POST', '/v1/checkout/sessions').map((r) => r.form['customer']),
        ...stripe.requestsTo('POST', '/v1/billing_portal/sessions').map((r) => r.form['customer']),
      ]);
      expect(used.has(made[0]!['id'] as string)).toBe(true);
      expect(answers.filter((_, i) => i % 2 === 1)[0]!.body.data.url).toMatch(/^https:\/\/billing\.stripe\.com\//);
    });

    it('sets the tier and grants the period credits once from checkout, subscription and invoice events, replays included', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'subscriber', credits: 5 });
      const metadata = { userId: user.userId, kind: 'plan', tier: 'starter' };
      const start = Math.floor(platform.clock.now() / 1000);
      stripeSubscription('sub_plan_1', metadata, 'price_starter_test', start);
      // Act
      const completed = await deliver('checkout.session.completed', {
        id: 'cs_test_done',
        object: 'checkout.session',
        mode: 'subscription',
        subscription: 'sub_plan_1',
        metadata,
      });
      const replay = await platform.api('POST', '/stripe/webhook', {
        rawBody: JSON.stringify(completed.event),
        headers: {
          'stripe-signature': Stripe.webhooks.generateTestHeaderString({
            payload: JSON.stringify(completed.event),
            secret: WEBHOOK_SECRET,
            timestamp: Math.floor(platform.clock.now() / 1000),
          }),
        },
      });
      const updated = await deliver('customer.subscription.updated', stripe.subscriptions.get('sub_plan_1')!);
      const paid = await deliver('invoice.paid', invoice('in_plan_1', 'sub_plan_1', metadata, start, 1900));
      const afterFirstPeriod = await credits(user);
      const nextPaid = await deliver('invoice.paid', invoice('in_plan_2', 'sub_plan_1', metadata, start + 30 * 86400, 1900));
      const lateOld = await deliver('invoice.paid', invoice('in_plan_1b', 'sub_plan_1', metadata, start, 1900));
      // Assess
      expect([completed.res.status, replay.status, updated.res.status, paid.res.status, nextPaid.res.status, lateOld.res.status]).toEqual([
        200, 200, 200, 200, 200, 200,
      ]);
      expect(completed.res.body.data).toMatchObject({ received: true, duplicate: false });
      expect(replay.body.data).toMatchObject({ received: true, duplicate: true });
      expect(afterFirstPeriod).toBe(5 + STARTER_CREDITS);
      expect(await credits(user)).toBe(5 + 2 * STARTER_CREDITS);
      expect(await subscription(user)).toMatchObject({ tier: 'starter', status: 'active', cancelAtPeriodEnd: false, monthlyCredits: STARTER_CREDITS });
      expect(stripe.requestsTo('GET', '/v1/subscriptions/sub_plan_1')).toHaveLength(1);
    });

    it('follows a plan change and a cancellation to the tier', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'changer' });
      const metadata = { userId: user.userId, kind: 'plan', tier: 'starter' };
      const start = Math.floor(platform.clock.now() / 1000);
      await deliver('customer.subscription.created', stripeSubscription('sub_plan_2', metadata, 'price_starter_test', start));
      const before = await credits(user);
      // Act: the portal moves it to the professional price within the same period, then it ends.
      await deliver('customer.subscription.updated', { ...stripeSubscription('sub_plan_2', metadata, 'price_pro_test', start), cancel_at_period_end: true });
      const changed = await subscription(user);
      await deliver('customer.subscription.deleted', stripeSubscription('sub_plan_2', metadata, 'price_pro_test', start, 'canceled'));
      const ended = await subscription(user);
      // Assess: no second grant within the period; the tier follows Stripe's status.
      expect(before).toBe(STARTER_CREDITS);
      expect(changed).toMatchObject({ tier: 'professional', cancelAtPeriodEnd: true, monthlyCredits: PRO_CREDITS });
      expect(await credits(user)).toBe(STARTER_CREDITS);
      expect(ended).toMatchObject({ tier: 'free', status: 'canceled' });
    });

    it('answers a forged or unsigned event with 400 and changes nothing', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'forged' });
      const metadata = { userId: user.userId, kind: 'plan', tier: 'professional' };
      const sub = stripeSubscription('sub_forged', metadata, 'price_pro_test', Math.floor(platform.clock.now() / 1000));
      // Act
      const forged = await deliver('customer.subscription.created', sub, { secret: 'whsec_not_the_platforms' });
      const unsigned = await platform.api('POST', '/stripe/webhook', {
        rawBody: JSON.stringify({ id: 'evt_x', type: 'customer.subscription.created', data: { object: sub } }),
      });
      // Assess
      expect(forged.res.status).toBe(400);
      expect(forged.res.body.code).toBe('INVALID_SIGNATURE');
      expect(unsigned.status).toBe(400);
      expect(await subscription(user)).toMatchObject({ tier: 'free' });
      expect(await credits(user)).toBe(0);
    });

    it('lets the operator, and no one else, set a tier, which changes the website quota', async () => {
      // Prepare
      const user = await createUser(platform, { alias: 'quota' });
      const quotaBefore = (await platform.api('GET', '/website/usage', { token: user.token })).body.data.storageQuotaMb;
      // Act
      const refused = await platform.api('POST', `/admin/users/${user.userId}/tier`, { token: user.token, body: { tier: 'professional' } });
      const invalid = await platform.api('POST', `/admin/users/${user.userId}/tier`, { token: platform.adminToken, body: { tier: 'gold' } });
      const set = await platform.api('POST', `/admin/users/${user.userId}/tier`, { token: platform.adminToken, body: { tier: 'starter' } });
      const usage = (await platform.api('GET', '/website/usage', { token: user.token })).body.data;
      // Assess
      expect(refused.status).toBe(403);
      expect(invalid.status).toBe(400);
      expect(set.status).toBe(200);
      expect(set.body.data).toMatchObject({ userId: user.userId, tier: 'starter', limits: { codeServer: true, websiteQuotaMb: 1024 } });
      expect(quotaBefore).toBe(50);
      expect(usage).toMatchObject({ tier: 'starter', storageQuotaMb: 1024 });
      expect(await subscription(user)).toMatchObject({ tier: 'starter' });
    });
  });

  describe('paid MCP servers and earnings', () => {
    let author: User;
    let caller: User;
    let serverId: string;

    async function createServer(name: string, authorPricing: Record<string, unknown>) {
      const res = await platform.api('POST', '/mcp-admin/create', {
        token: author.token,
        body: { serverName: name, description: 'a paid server', sourceCode: MCP_SOURCE, visibility: 'public', authorPricing },
      });
      if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${res.text}`);
      return res.body.data.serverId as string;
    }
    const call = (id: string, token: string, method = 'tools/call') =>
      platform.api('POST', `/mcp/${id}`, {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method, params: method === 'tools/call' ? { name: 'ping', arguments: {} } : {} },
      });

    beforeAll(async () => {
      author = await createUser(platform, { alias: 'author', credits: 100 });
      caller = await createUser(platform, { alias: 'caller', credits: 100 });
      serverId = await createServer('paid-ping', { subscriptionPriceUsdMonthly: 5, freeTrialQuota: 3 });
    });

    it('counts the free trial exactly under concurrent calls, then answers 402 naming the subscribe URL', async () => {
      // Act
      const listed = await call(serverId, caller.token, 'tools/list');
      const calls = await Promise.all(Array.from({ length: 7 }, () => call(serverId, caller.token)));
      const state = await platform.api('GET', `/resources/${serverId}/subscription`, { token: caller.token });
      const owner = await call(serverId, author.token);
      // Assess
      expect(listed.status).toBe(200);
      expect(calls.filter((c) => c.status === 200)).toHaveLength(3);
      const refused = calls.filter((c) => c.status === 402);
      expect(refused).toHaveLength(4);
      expect(refused[0]!.body).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'SUBSCRIPTION_REQUIRED' } } });
      expect(refused[0]!.body.error.message).toContain(`/resources/${serverId}/subscribe`);
      expect(state.body.data).toMatchObject({ active: false, status: 'none', trialCallsUsed: 3, trialCallsLeft: 0 });
      expect(owner.status).toBe(200);
      // Infrastructure credits only (1 a call), for the 3 trial calls; nothing for the refused ones.
      expect(await credits(caller)).toBe(97);
    });

    it('subscribes through Checkout at the author price, then admits calls without the author fee', async () => {
      // Act
      const subscribe = await platform.api('POST', `/resources/${serverId}/subscribe`, { token: caller.token });
      const session = stripe.requestsTo('POST', '/v1/checkout/sessions').at(-1)!;
      const metadata = (session.form['subscription_data'] as { metadata: Record<string, string> }).metadata;
      const start = Math.floor(platform.clock.now() / 1000);
      stripeSubscription('sub_mcp_1', metadata, 'price_inline', start);
      await deliver('checkout.session.completed', {
        id: session.form['id'] ?? 'cs_x',
        object: 'checkout.session',
        mode: 'subscription',
        subscription: 'sub_mcp_1',
        metadata,
      });
      const before = await credits(caller);
      const admitted = await call(serverId, caller.token);
      const state = await platform.api('GET', `/resources/${serverId}/subscription`, { token: caller.token });
      // Assess
      expect(subscribe.status).toBe(200);
      expect(subscribe.body.data.url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
      expect(session.form).toMatchObject({
        mode: 'subscription',
        line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '500', recurring: { interval: 'month' } } }],
      });
      expect(metadata).toEqual({ userId: caller.userId, kind: 'mcp', serverId, authorId: author.userId });
      expect(admitted.status).toBe(200);
      expect(await credits(caller)).toBe(before - 1);
      expect(state.body.data).toMatchObject({ active: true, status: 'active', cancelAtPeriodEnd: false });
    });

    it("records each paid invoice once as the author's earning, net of the platform's fee", async () => {
      // Prepare
      const metadata = { userId: caller.userId, kind: 'mcp', serverId, authorId: author.userId };
      const start = Math.floor(platform.clock.now() / 1000);
      // Act
      const first = await deliver('invoice.paid', invoice('in_mcp_1', 'sub_mcp_1', metadata, start, 500));
      await deliver('invoice.paid', first.event.data.object as Record<string, unknown>);
      await deliver('invoice.payment_succeeded', invoice('in_mcp_1', 'sub_mcp_1', metadata, start, 500));
      const earnings = await platform.api('GET', '/author/earnings', { token: author.token });
      const resources = await platform.api('GET', '/author/resources', { token: author.token });
      // Assess: 500 cents gross, 20 % fee = 100, net 400, counted once.
      expect(earnings.body.data.totals).toEqual({ grossCents: 500, platformFeeCents: 100, netCents: 400, paidOutCents: 0, availableCents: 400 });
      expect(earnings.body.data.byResource).toEqual([{ resourceId: serverId, grossCents: 500, platformFeeCents: 100, netCents: 400 }]);
      expect(earnings.body.data.byMonth).toHaveLength(1);
      expect(resources.body.data.resources).toEqual([expect.objectContaining({ resourceId: serverId, subscribers: 1, trialUsers: 1 })]);
    });

    it('charges the per-call author fee past the trial and pays it to the author', async () => {
      // Prepare
      const feeServer = await createServer('fee-ping', { subscriptionPriceUsdMonthly: 1, freeTrialQuota: 0, perCallCredits: 5 });
      const [callerBefore, authorBefore] = [await credits(caller), await credits(author)];
      // Act
      const res = await call(feeServer, caller.token);
      // Assess: 1 infrastructure credit and the author's 5.
      expect(res.status).toBe(200);
      expect(await credits(caller)).toBe(callerBefore - 6);
      expect(await credits(author)).toBe(authorBefore + 5);
    });

    it('cancels at period end through Stripe', async () => {
      // Act
      const res = await platform.api('POST', `/resources/${serverId}/subscription/cancel`, { token: caller.token });
      // Assess
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ resourceId: serverId, cancelAtPeriodEnd: true });
      expect(stripe.requestsTo('POST', '/v1/subscriptions/sub_mcp_1').at(-1)!.form).toEqual({ cancel_at_period_end: 'true' });
      expect((await platform.api('GET', `/resources/${serverId}/subscription`, { token: caller.token })).body.data).toMatchObject({
        active: true,
        cancelAtPeriodEnd: true,
      });
    });

    it('pays out the available balance once, above the minimum, never more than was earned', async () => {
      // Prepare
      const connect = await platform.api('POST', '/author/stripe/connect', { token: author.token });
      const status = await platform.api('GET', '/author/stripe/status', { token: author.token });
      const belowMinimum = await platform.api('POST', '/author/payouts/process', { token: author.token });
      const metadata = { userId: caller.userId, kind: 'mcp', serverId, authorId: author.userId };
      const start = Math.floor(platform.clock.now() / 1000);
      await deliver('invoice.paid', invoice('in_mcp_2', 'sub_mcp_1', metadata, start + 30 * 86400, 500));
      await deliver('invoice.paid', invoice('in_mcp_3', 'sub_mcp_1', metadata, start + 60 * 86400, 500));
      // Act
      const runs = await Promise.all(Array.from({ length: 5 }, () => platform.api('POST', '/author/payouts/process', { token: author.token })));
      const again = await platform.api('POST', '/author/payouts/process', { token: author.token });
      const history = await platform.api('GET', '/author/payouts/history', { token: author.token });
      const earnings = await platform.api('GET', '/author/earnings', { token: author.token });
      // Assess
      expect(connect.status).toBe(200);
      expect(connect.body.data.url).toMatch(/^https:\/\/connect\.stripe\.com\//);
      expect(status.body.data).toMatchObject({ connected: true, payoutsEnabled: true });
      expect(belowMinimum.status).toBe(400);
      expect(belowMinimum.body.code).toBe('BELOW_PAYOUT_MINIMUM');
      expect(runs.filter((r) => r.status === 200)).toHaveLength(1);
      // The others found the payout under way (409) or, once it was written, nothing left above the minimum (400).
      expect(
        runs
          .filter((r) => r.status !== 200)
          .map((r) => r.body.code)
          .sort(),
      ).toEqual(
        runs
          .filter((r) => r.status !== 200)
          .map((r) => (r.status === 409 ? 'PAYOUT_IN_PROGRESS' : 'BELOW_PAYOUT_MINIMUM'))
          .sort(),
      );
      expect(runs.filter((r) => r.status !== 200).every((r) => r.status === 409 || r.status === 400)).toBe(true);
      const transfers = stripe.requestsTo('POST', '/v1/transfers');
      expect(transfers).toHaveLength(1);
      expect(transfers[0]!.form).toMatchObject({ amount: '1200', currency: 'usd', destination: connect.body.data.accountId });
      expect(transfers[0]!.idempotencyKey).toBeDefined();
      expect(again.status).toBe(400);
      expect(history.body.data.payouts).toEqual([expect.objectContaining({ amountCents: 1200, status: 'paid', transferId: expect.stringMatching(/^tr_/) })]);
      expect(earnings.body.data.totals).toEqual({ grossCents: 1500, platformFeeCents: 300, netCents: 1200, paidOutCents: 1200, availableCents: 0 });
    });

    it('gives the balance back by a reversal entry when Stripe refuses the transfer', async () => {
      // Prepare
      const metadata = { userId: caller.userId, kind: 'mcp', serverId, authorId: author.userId };
      await deliver('invoice.paid', invoice('in_mcp_4', 'sub_mcp_1', metadata, Math.floor(platform.clock.now() / 1000) + 90 * 86400, 1500));
      stripe.failTransfersWith = 'Insufficient funds in Stripe account.';
      // Act
      const failed = await platform.api('POST', '/author/payouts/process', { token: author.token });
      const afterFailure = (await platform.api('GET', '/author/earnings', { token: author.token })).body.data.totals;
      stripe.failTransfersWith = null;
      const retried = await platform.api('POST', '/author/payouts/process', { token: author.token });
      const history = (await platform.api('GET', '/author/payouts/history', { token: author.token })).body.data.payouts;
      // Assess
      expect(failed.status).toBe(502);
      expect(failed.body.error).toContain('Insufficient funds');
      expect(afterFailure).toMatchObject({ netCents: 2400, paidOutCents: 1200, availableCents: 1200 });
      expect(retried.status).toBe(200);
      expect(retried.body.data).toMatchObject({ amountCents: 1200, status: 'paid' });
      expect(history.map((p: { status: string }) => p.status).sort()).toEqual(['failed', 'paid', 'paid']);
    });
  });
});

describe('billing without Stripe settings', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers checkout, portal and the webhook with 503 BILLING_NOT_CONFIGURED, and still shows the plan', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'unbilled' });
    // Act
    const checkout = await platform.api('POST', '/subscription/checkout', { token: user.token, body: { tier: 'starter' } });
    const portal = await platform.api('POST', '/subscription/portal', { token: user.token });
    const webhook = await platform.api('POST', '/stripe/webhook', { rawBody: '{}', headers: { 'stripe-signature': 't=1,v1=00' } });
    const plan = await platform.api('GET', '/user/subscription', { token: user.token });
    // Assess
    for (const res of [checkout, portal, webhook]) {
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('BILLING_NOT_CONFIGURED');
      expect(res.text).not.toContain('sk_');
    }
    expect(plan.body.data).toEqual({
      tier: 'free',
      status: 'none',
      currentPeriodEnd: null,
      cancelAtPeriodEnd: false,
      monthlyCredits: 0,
      limits: { monthlyCredits: 0, websiteQuotaMb: 50, codeServer: false },
    });
  });
});
