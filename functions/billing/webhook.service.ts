/**
 * `POST /stripe/webhook`: Stripe's events, verified with the Stripe library on the raw body (a bad
 * signature is a 400 and changes nothing), each event id processed once (a claim item; a failed
 * processing releases it so Stripe's retry runs it again). Effects are idempotent on their own too:
 * a plan's credits are granted by a conditional write on the paid period, and an earning is an
 * entry keyed by its invoice.
 *
 * - `checkout.session.completed`: the subscription is read from Stripe and recorded.
 * - `customer.subscription.created|updated|deleted`: recorded; a plan's tier follows the status.
 * - `invoice.paid`: a plan's period is granted; a paid MCP server's payment is the author's earning.
 */
import type StripeLibrary from 'stripe';
import { planLimits, type Tier } from '../core/plans.ts';
import type { BillingPorts } from './billing.ports.ts';
import type { SubscriptionSubject } from './billing.store.ts';
import type { StripeEvent } from './stripe-client.ts';

/** A subscription grants while Stripe considers it paid. */
const PAID_STATUSES: ReadonlySet<string> = new Set(['active', 'trialing']);

interface Purchase {
  readonly userId: string;
  readonly subject: SubscriptionSubject;
  readonly tier?: Tier;
  readonly authorId?: string;
}

/** What the metadata written at checkout says was bought; null for events the platform did not start. */
function purchaseOf(metadata: Record<string, string> | null | undefined): Purchase | null {
  const userId = metadata?.['userId'];
  if (userId === undefined || userId === '') return null;
  if (metadata?.['kind'] === 'plan' && (metadata['tier'] === 'starter' || metadata['tier'] === 'professional'))
    return { userId, subject: 'plan', tier: metadata['tier'] };
  const serverId = metadata?.['serverId'];
  if (metadata?.['kind'] === 'mcp' && serverId !== undefined && metadata['authorId'] !== undefined)
    return { userId, subject: `mcp#${serverId}`, authorId: metadata['authorId'] };
  return null;
}

/** The tier a price id stands for (a plan changed in the portal changes its price). */
function tierOfPrice(priceId: string | undefined, ports: Pick<BillingPorts, 'config'>): Tier | null {
  if (priceId === undefined) return null;
  if (priceId === ports.config.STRIPE_PRICE_STARTER) return 'starter';
  if (priceId === ports.config.STRIPE_PRICE_PROFESSIONAL) return 'professional';
  return null;
}

/** Current period of a subscription: on its items since API 2025-03, on the subscription before. */
function periodOf(subscription: StripeLibrary.Subscription): { start: number | null; end: number | null } {
  const item = subscription.items?.data?.[0] as { current_period_start?: number; current_period_end?: number } | undefined;
  const legacy = subscription as unknown as { current_period_start?: number; current_period_end?: number };
  return { start: item?.current_period_start ?? legacy.current_period_start ?? null, end: item?.current_period_end ?? legacy.current_period_end ?? null };
}

async function recordSubscription(subscription: StripeLibrary.Subscription, requestId: string, ports: BillingPorts): Promise<void> {
  const purchase = purchaseOf(subscription.metadata);
  if (purchase === null) return;
  const { start, end } = periodOf(subscription);
  const priceTier = tierOfPrice(subscription.items?.data?.[0]?.price?.id, ports);
  const tier = purchase.subject === 'plan' ? (priceTier ?? purchase.tier ?? 'starter') : undefined;
  await ports.billing.putSubscription({
    userId: purchase.userId,
    subject: purchase.subject,
    stripeSubscriptionId: subscription.id,
    status: subscription.status,
    ...(tier !== undefined ? { tier } : {}),
    currentPeriodEnd: end,
    cancelAtPeriodEnd: subscription.cancel_at_period_end === true,
    updatedAt: ports.clock.now(),
  });
  if (purchase.subject !== 'plan' || tier === undefined) return;
  if (!PAID_STATUSES.has(subscription.status)) {
    await ports.credits.setTier(purchase.userId, 'free');
    return;
  }
  if (start === null) {
    await ports.credits.setTier(purchase.userId, tier);
    return;
  }
  await grantPeriod(purchase.userId, tier, start, requestId, ports);
}

function grantPeriod(userId: string, tier: Tier, periodStart: number, requestId: string, ports: BillingPorts) {
  const credits = planLimits(tier, ports.config).monthlyCredits;
  const month = new Date(periodStart * 1000).toISOString().slice(0, 10);
  return ports.credits.grantPlanPeriod(userId, { tier, periodStart, credits, reason: `${tier} plan credits for the period from ${month}`, requestId });
}

/** The subscription and its metadata an invoice belongs to (moved under `parent` in API 2025-03). */
function invoiceSubscription(invoice: StripeLibrary.Invoice): { id: string | null; metadata: Record<string, string> | null } {
  const parent = (invoice as unknown as { parent?: { subscription_details?: { subscription?: unknown; metadata?: Record<string, string> | null } } }).parent;
  const legacy = invoice as unknown as { subscription?: unknown; subscription_details?: { metadata?: Record<string, string> | null } };
  const ref = parent?.subscription_details?.subscription ?? legacy.subscription;
  const id = typeof ref === 'string' ? ref : typeof ref === 'object' && ref !== null ? String((ref as { id: unknown }).id) : null;
  return { id, metadata: parent?.subscription_details?.metadata ?? legacy.subscription_details?.metadata ?? null };
}

async function invoicePaid(invoice: StripeLibrary.Invoice, requestId: string, ports: BillingPorts): Promise<void> {
  const { metadata } = invoiceSubscription(invoice);
  const purchase = purchaseOf(metadata);
  if (purchase === null) return;
  const line = invoice.lines?.data?.[0];
  const periodStart = line?.period?.start ?? invoice.period_start;
  const periodEnd = line?.period?.end ?? invoice.period_end;
  if (purchase.subject === 'plan') {
    const tier =
      tierOfPrice((line as { pricing?: { price_details?: { price?: string } } } | undefined)?.pricing?.price_details?.price, ports) ??
      purchase.tier ??
      'starter';
    await grantPeriod(purchase.userId, tier, periodStart, requestId, ports);
    return;
  }
  const existing = await ports.billing.getSubscription(purchase.userId, purchase.subject);
  if (existing !== null && (existing.currentPeriodEnd ?? 0) < periodEnd)
    await ports.billing.putSubscription({ ...existing, status: 'active', currentPeriodEnd: periodEnd, updatedAt: ports.clock.now() });
  const gross = invoice.amount_paid;
  if (gross <= 0 || invoice.id === undefined || purchase.authorId === undefined) return;
  // Cents, rounded once: the platform's share is whole cents, the author earns the rest.
  const fee = Math.round((gross * ports.config.PAID_MCP_PLATFORM_FEE_PERCENT) / 100);
  await ports.billing.appendMoney({
    authorId: purchase.authorId,
    entryId: `earn#${invoice.id}`,
    kind: 'earning',
    grossCents: gross,
    feeCents: fee,
    netCents: gross - fee,
    resourceId: purchase.subject.slice('mcp#'.length),
    subscriberId: purchase.userId,
    month: new Date(periodStart * 1000).toISOString().slice(0, 7),
    createdAt: ports.clock.now(),
  });
}

async function apply(event: StripeEvent, requestId: string, ports: BillingPorts): Promise<void> {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      if (session.mode !== 'subscription' || session.subscription === null) return;
      const id = typeof session.subscription === 'string' ? session.subscription : session.subscription.id;
      await recordSubscription(await ports.stripe.retrieveSubscription(id), requestId, ports);
      return;
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      await recordSubscription(event.data.object, requestId, ports);
      return;
    case 'invoice.paid':
    case 'invoice.payment_succeeded':
      await invoicePaid(event.data.object, requestId, ports);
      return;
    default:
      return;
  }
}

/** Handles one delivery; `{received, duplicate}` on success. */
export async function handleStripeWebhook(rawBody: Buffer, signature: string | undefined, requestId: string, ports: BillingPorts) {
  const event = await ports.stripe.verifyEvent(rawBody, signature, Math.floor(ports.clock.now() / 1000));
  if (!(await ports.billing.claimEvent(event.id, event.type))) return { received: true as const, duplicate: true, type: event.type };
  try {
    await apply(event, requestId, ports);
  } catch (error) {
    await ports.billing.releaseEvent(event.id);
    throw error;
  }
  await ports.billing.completeEvent(event.id);
  return { received: true as const, duplicate: false, type: event.type };
}
