/**
 * SPEC 4.4's subscriptions to paid MCP servers: Checkout for the author's monthly price (the
 * platform keeps PAID_MCP_PLATFORM_FEE_PERCENT of each payment, the author earns the rest: see
 * earnings.service.ts), the caller's subscription and trial state, and cancellation at period end.
 */
import { randomUUID } from 'node:crypto';
import type { UserActor } from '../core/auth/actor.ts';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import type { McpServerRecord } from '../mcp/mcp.schema.ts';
import type { BillingPorts } from './billing.ports.ts';
import { subscriptionIsActive } from './paid-access.ts';
import { requireStripeSettings } from './stripe-client.ts';
import { customerOf } from './subscription.service.ts';

/** A paid server the caller may see (private ones only by their owner: 404 otherwise). */
async function pricedServer(
  actor: UserActor,
  resourceId: string,
  ports: Pick<BillingPorts, 'mcpServers'>,
): Promise<McpServerRecord & { authorPricing: NonNullable<McpServerRecord['authorPricing']> }> {
  const server = await ports.mcpServers.get(resourceId);
  if (server === null || (server.visibility !== 'public' && server.ownerId !== actor.userId))
    throw new NotFoundError(`Resource ${resourceId} not found.`, 'RESOURCE_NOT_FOUND');
  if (server.authorPricing === null) throw new ValidationError(`Resource ${resourceId} is not a paid resource`, ['resourceId: has no authorPricing']);
  return server as McpServerRecord & { authorPricing: NonNullable<McpServerRecord['authorPricing']> };
}

/** `POST /resources/{resourceId}/subscribe`. */
export async function subscribeToResource(actor: UserActor, resourceId: string, baseUrl: string, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const server = await pricedServer(actor, resourceId, ports);
  if (server.ownerId === actor.userId) throw new ValidationError('Authors do not subscribe to their own resources', ['resourceId: is yours']);
  if (subscriptionIsActive(await ports.billing.getSubscription(actor.userId, `mcp#${resourceId}`), ports.clock.now()))
    throw new ConflictError(`You already subscribe to ${resourceId}.`, 'ALREADY_SUBSCRIBED');
  const customer = await customerOf(actor, ports);
  const session = await ports.stripe.createCheckoutSession({
    customer,
    price: { unitAmountCents: Math.round(server.authorPricing.subscriptionPriceUsdMonthly * 100), productName: `MCP server ${server.serverName}` },
    successUrl: `${baseUrl}/resources/${resourceId}/subscription?checkout=success`,
    cancelUrl: `${baseUrl}/resources/${resourceId}/subscription?checkout=cancelled`,
    metadata: { userId: actor.userId, kind: 'mcp', serverId: resourceId, authorId: server.ownerId },
    idempotencyKey: `subscribe-${actor.userId}-${randomUUID()}`,
  });
  return { url: session.url, sessionId: session.id };
}

/** `GET /resources/{resourceId}/subscription`. */
export async function getResourceSubscription(actor: UserActor, resourceId: string, ports: BillingPorts) {
  const server = await pricedServer(actor, resourceId, ports);
  const [record, used] = await Promise.all([
    ports.billing.getSubscription(actor.userId, `mcp#${resourceId}`),
    ports.billing.trialCallsUsed(resourceId, actor.userId),
  ]);
  return {
    resourceId,
    active: subscriptionIsActive(record, ports.clock.now()),
    status: record?.status ?? 'none',
    currentPeriodEnd: record?.currentPeriodEnd != null ? new Date(record.currentPeriodEnd * 1000).toISOString() : null,
    cancelAtPeriodEnd: record?.cancelAtPeriodEnd ?? false,
    priceUsdMonthly: server.authorPricing.subscriptionPriceUsdMonthly,
    trialCallsUsed: used,
    trialCallsLeft: Math.max(0, server.authorPricing.freeTrialQuota - used),
  };
}

/** `POST /resources/{resourceId}/subscription/cancel`: at period end, through Stripe; the webhook records Stripe's answer too. */
export async function cancelResourceSubscription(actor: UserActor, resourceId: string, ports: BillingPorts) {
  requireStripeSettings(ports.config, ['STRIPE_SECRET_KEY']);
  const record = await ports.billing.getSubscription(actor.userId, `mcp#${resourceId}`);
  if (record === null || !subscriptionIsActive(record, ports.clock.now()))
    throw new NotFoundError(`You have no active subscription to ${resourceId}.`, 'SUBSCRIPTION_NOT_FOUND');
  const updated = await ports.stripe.cancelAtPeriodEnd(record.stripeSubscriptionId);
  await ports.billing.putSubscription({
    ...record,
    cancelAtPeriodEnd: updated.cancel_at_period_end === true,
    status: updated.status,
    updatedAt: ports.clock.now(),
  });
  return {
    resourceId,
    cancelAtPeriodEnd: updated.cancel_at_period_end === true,
    currentPeriodEnd: record.currentPeriodEnd !== null ? new Date(record.currentPeriodEnd * 1000).toISOString() : null,
  };
}
