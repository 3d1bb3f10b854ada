/**
 * The platform's plans with Stripe: the caller's subscription, Checkout and the customer portal,
 * the operator's tier setting. One Stripe customer per user, even under concurrent calls: the
 * first caller claims an idempotency key on the account, every caller creates the customer with
 * that key, so Stripe answers them all with the same customer.
 */
import { randomUUID } from 'node:crypto';
import type { UserActor } from '../core/auth/actor.ts';
import { planLimits, tierOf, type Tier } from '../core/plans.ts';
import type { BillingPorts } from './billing.ports.ts';
import { requireStripeSettings } from './stripe-client.ts';

/** `GET /user/subscription`. */
export async function getUserSubscription(actor: UserActor, ports: Pick<BillingPorts, 'billing' | 'config' | 'credits'>) {
  const record = await ports.billing.getSubscription(actor.userId, 'plan');
  // The tier is the account's (what limits read); the subscription says how it is paid.
  const tier: Tier = actor.account !== undefined ? tierOf(actor) : (record?.tier ?? 'free');
  return {
    tier,
    status: record?.status ?? (tier === 'free' ? 'none' : 'active'),
    currentPeriodEnd: record?.currentPeriodEnd != null ? new Date(record.currentPeriodEnd * 1000).toISOString() : null,
    cancelAtPeriodEnd: record?.cancelAtPeriodEnd ?? false,
    monthlyCredits: planLimits(tier, ports.config).monthlyCredits,
    limits: planLimits(tier, ports.config),
  };
}

/** The caller's Stripe customer, created once. */
export async function customerOf(actor: UserActor, ports: Pick<BillingPorts, 'billing' | 'stripe'>): Promise<string> {
  const account = await ports.billing.getAccount(actor.userId);
  if (account?.stripeCustomerId !== undefined) return account.stripeCustomerId;
  const key = account?.customerKey ?? (await ports.billing.claimCustomerKey(actor.userId, `customer-${actor.userId}-${randomUUID()}`));
  const email = (actor.account?.item as { email?: unknown } | undefined)?.email;
  const customer = await ports.stripe.createCustomer({ userId: actor.userId, email: typeof email === 'string' ? email : null }, key);
  return ports.billing.setCustomerId(actor.userId, customer.id);
}

/** `POST /subscription/checkout`: Stripe Checkout in subscription mode for a paid tier. */
export async function createPlanCheckout(actor: UserActor, tier: 'starter' | 'professional', baseUrl: string, ports: BillingPorts) {
  const settings = requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY', tier === 'starter' ? 'STRIPE_PRICE_STARTER' : 'STRIPE_PRICE_PROFESSIONAL']);
  const price = tier === 'starter' ? settings.STRIPE_PRICE_STARTER : settings.STRIPE_PRICE_PROFESSIONAL;
  if (price === undefined) throw new Error('unreachable: the price was required');
  const customer = await customerOf(actor, ports);
  const session = await ports.stripe.createCheckoutSession({
    customer,
    price: { id: price },
    successUrl: `${baseUrl}/user/subscription?checkout=success`,
    cancelUrl: `${baseUrl}/user/subscription?checkout=cancelled`,
    metadata: { userId: actor.userId, kind: 'plan', tier },
    idempotencyKey: `checkout-${actor.userId}-${randomUUID()}`,
  });
  return { url: session.url, sessionId: session.id };
}

/** `POST /subscription/portal`: the Stripe customer portal, where the plan is changed or cancelled. */
export async function createPortal(actor: UserActor, baseUrl: string, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const customer = await customerOf(actor, ports);
  // Only the URL: the rest of Stripe's session (customer id, return URL, ...) is not the caller's business.
  const session = await ports.stripe.createPortalSession(customer, `${baseUrl}/user/subscription`);
  return { url: session.url };
}
