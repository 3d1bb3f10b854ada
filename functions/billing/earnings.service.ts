/**
 * Author earnings, computed from the money ledger (cents, integers; never stored totals): each
 * paid MCP invoice is an `earning` (gross, the platform's fee, net), each transfer to the author's
 * connected account a `payout`, a failed transfer a `payout-reversal`. Available = net earned -
 * paid out + reversed.
 *
 * Payouts are serialized by their entry id, `payout#<n>` where n counts the author's payouts so
 * far: two concurrent requests compute the same n and only one writes it, so a balance is paid at
 * most once, and each amount is what the ledger shows available after every earlier payout, so
 * the payouts never add up to more than was earned. The transfer's Stripe idempotency key is the
 * same id, so a retried request cannot send it twice either.
 */
import { randomUUID } from 'node:crypto';
import type { UserActor } from '../core/auth/actor.ts';
import { ConflictError, ValidationError } from '../core/errors.ts';
import type { BillingPorts } from './billing.ports.ts';
import type { MoneyEntry } from './billing.store.ts';
import { requireStripeSettings } from './stripe-client.ts';

interface Figures {
  grossCents: number;
  platformFeeCents: number;
  netCents: number;
}

const zero = (): Figures => ({ grossCents: 0, platformFeeCents: 0, netCents: 0 });

/** Sums over the ledger: what was earned (per resource and month), paid out, and is available. */
export function summarize(entries: readonly MoneyEntry[]) {
  const totals = zero();
  const byResource = new Map<string, Figures>();
  const byMonth = new Map<string, Figures>();
  let paidOutCents = 0;
  const add = (into: Figures, e: MoneyEntry) => {
    into.grossCents += e.grossCents;
    into.platformFeeCents += e.feeCents;
    into.netCents += e.netCents;
  };
  for (const e of entries) {
    if (e.kind === 'earning') {
      add(totals, e);
      const resource = byResource.get(e.resourceId ?? '') ?? zero();
      add(resource, e);
      byResource.set(e.resourceId ?? '', resource);
      const month = byMonth.get(e.month) ?? zero();
      add(month, e);
      byMonth.set(e.month, month);
    } else if (e.kind === 'payout') paidOutCents += e.netCents;
    else paidOutCents -= e.netCents;
  }
  return {
    currency: 'usd' as const,
    totals: { ...totals, paidOutCents, availableCents: totals.netCents - paidOutCents },
    byResource: [...byResource].map(([resourceId, f]) => ({ resourceId, ...f })).sort((a, b) => b.netCents - a.netCents),
    byMonth: [...byMonth].map(([month, f]) => ({ month, ...f })).sort((a, b) => b.month.localeCompare(a.month)),
    payouts: entries.filter((e) => e.kind === 'payout').length,
  };
}

/** `GET /author/earnings`. */
export async function getEarnings(actor: UserActor, ports: Pick<BillingPorts, 'billing' | 'config'>) {
  const summary = summarize(await ports.billing.moneyEntries(actor.userId));
  return {
    ...summary,
    platformFeePercent: ports.config.PAID_MCP_PLATFORM_FEE_PERCENT,
    payoutMinimumCents: ports.config.PAYOUT_MINIMUM_CENTS,
  };
}

/** `GET /author/resources`: the author's priced servers with subscriber and trial counts. */
export async function listAuthorResources(actor: UserActor, ports: Pick<BillingPorts, 'billing' | 'mcpServers' | 'clock'>) {
  const resources = [];
  let cursor: string | undefined;
  do {
    const page = await ports.mcpServers.listByOwner(actor.userId, {}, { limit: 100, ...(cursor ? { cursor } : {}) });
    for (const server of page.items) {
      if (server.authorPricing === null) continue;
      const [subscribers, trialUsers] = await Promise.all([ports.billing.subscribersOf(`mcp#${server.serverId}`), ports.billing.trialUsers(server.serverId)]);
      const now = ports.clock.now();
      resources.push({
        resourceId: server.serverId,
        resourceType: 'mcp' as const,
        name: server.serverName,
        visibility: server.visibility,
        authorPricing: server.authorPricing,
        subscribers: subscribers.filter(
          (s) => (s.status === 'active' || s.status === 'trialing') && (s.currentPeriodEnd === null || s.currentPeriodEnd * 1000 > now),
        ).length,
        trialUsers,
      });
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return { resources, count: resources.length };
}

/** `POST /author/stripe/connect`: the author's connected account (created once) and its onboarding link. */
export async function connectOnboarding(actor: UserActor, baseUrl: string, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const accountId = await connectAccountOf(actor, ports);
  const link = await ports.stripe.createAccountLink(accountId, `${baseUrl}/author/stripe/status?refresh=1`, `${baseUrl}/author/stripe/status`);
  return { url: link.url, accountId };
}

async function connectAccountOf(actor: UserActor, ports: BillingPorts): Promise<string> {
  const account = await ports.billing.getAccount(actor.userId);
  if (account?.connectAccountId !== undefined) return account.connectAccountId;
  const key = account?.connectKey ?? (await ports.billing.claimConnectKey(actor.userId, `connect-${actor.userId}-${randomUUID()}`));
  const email = (actor.account?.item as { email?: unknown } | undefined)?.email;
  const created = await ports.stripe.createConnectAccount({ userId: actor.userId, email: typeof email === 'string' ? email : null }, key);
  return ports.billing.setConnectAccountId(actor.userId, created.id);
}

/** `GET /author/stripe/status`. */
export async function connectStatus(actor: UserActor, ports: BillingPorts) {
  const account = await ports.billing.getAccount(actor.userId);
  if (account?.connectAccountId === undefined)
    return { connected: false, payoutsEnabled: false, chargesEnabled: false, detailsSubmitted: false, accountId: null };
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const found = await ports.stripe.retrieveAccount(account.connectAccountId);
  return {
    connected: true,
    accountId: found.id,
    payoutsEnabled: found.payoutsEnabled,
    chargesEnabled: found.chargesEnabled,
    detailsSubmitted: found.detailsSubmitted,
  };
}

/** `POST /author/stripe/dashboard`: a login link to the connected account's Express dashboard. */
export async function dashboardLink(actor: UserActor, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const account = await ports.billing.getAccount(actor.userId);
  if (account?.connectAccountId === undefined)
    throw new ValidationError('No Stripe account connected yet', ['connect one with POST /author/stripe/connect first']);
  return { url: (await ports.stripe.createLoginLink(account.connectAccountId)).url };
}

/** `GET /author/payouts/history`: newest first. */
export async function payoutHistory(actor: UserActor, ports: Pick<BillingPorts, 'billing'>) {
  const entries = await ports.billing.moneyEntries(actor.userId);
  const reversed = new Set(entries.filter((e) => e.kind === 'payout-reversal').map((e) => e.entryId.replace(/^reversal#/, 'payout#')));
  const payouts = entries
    .filter((e) => e.kind === 'payout')
    .map((e) => ({
      payoutId: e.entryId,
      amountCents: e.netCents,
      status: reversed.has(e.entryId) ? ('failed' as const) : e.transferId !== undefined ? ('paid' as const) : ('pending' as const),
      transferId: e.transferId ?? null,
      createdAt: e.createdAt,
    }))
    .sort((a, b) => b.createdAt - a.createdAt);
  return { payouts, count: payouts.length };
}

/** `POST /author/payouts/process`. */
export async function processPayout(actor: UserActor, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const account = await ports.billing.getAccount(actor.userId);
  if (account?.connectAccountId === undefined)
    throw new ValidationError('No Stripe account connected yet', ['connect one with POST /author/stripe/connect first']);
  const entries = await ports.billing.moneyEntries(actor.userId);
  const { totals, payouts } = summarize(entries);
  const minimum = ports.config.PAYOUT_MINIMUM_CENTS;
  if (totals.availableCents < minimum)
    throw new ValidationError(
      `The available balance (${totals.availableCents} cents) is below the payout minimum (${minimum} cents)`,
      [`availableCents: must be at least ${minimum}`],
      'BELOW_PAYOUT_MINIMUM',
    );
  const payoutId = `payout#${String(payouts).padStart(6, '0')}`;
  const now = ports.clock.now();
  const written = await ports.billing.appendMoney({
    authorId: actor.userId,
    entryId: payoutId,
    kind: 'payout',
    grossCents: totals.availableCents,
    feeCents: 0,
    netCents: totals.availableCents,
    resourceId: null,
    subscriberId: null,
    month: new Date(now).toISOString().slice(0, 7),
    createdAt: now,
  });
  if (!written) throw new ConflictError('A payout of this balance is already under way.', 'PAYOUT_IN_PROGRESS');
  try {
    const transfer = await ports.stripe.createTransfer(
      { amountCents: totals.availableCents, destination: account.connectAccountId, metadata: { userId: actor.userId, payoutId } },
      `${actor.userId}-${payoutId}`,
    );
    await ports.billing.setTransferId(actor.userId, payoutId, transfer.id);
    return { payoutId, amountCents: totals.availableCents, transferId: transfer.id, status: 'paid' as const };
  } catch (error) {
    // The balance comes back by a new entry; the payout entry stays, as every movement does.
    await ports.billing.appendMoney({
      authorId: actor.userId,
      entryId: payoutId.replace('payout#', 'reversal#'),
      kind: 'payout-reversal',
      grossCents: totals.availableCents,
      feeCents: 0,
      netCents: totals.availableCents,
      resourceId: null,
      subscriberId: null,
      month: new Date(now).toISOString().slice(0, 7),
      createdAt: ports.clock.now(),
    });
    throw error;
  }
}
