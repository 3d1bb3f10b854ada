import * as z from 'zod';
import { TIERS } from '../core/plans.ts';
import { authorPricingSchema, serverIdSchema } from '../mcp/mcp.schema.ts';

export const checkoutBody = z.object({
  tier: z.enum(['starter', 'professional'], { error: 'must be "starter" or "professional" (the paid tiers)' }),
});

export const resourceParams = z.object({ resourceId: serverIdSchema });

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** What a plan gives, with the operator's settings applied (`planLimits`). */
export const planLimitsResponse = z.object({
  monthlyCredits: z.number().describe('Credits granted once per paid period (for `free`, each calendar month)'),
  websiteQuotaMb: z.number().describe('Website storage, in MiB'),
  codeServer: z.boolean().describe('Whether the plan includes a code server'),
});

const isoOrNull = z.string().nullable().describe('ISO 8601; null when there is no paid period');
const stripeStatus = z.string().describe("Stripe's subscription status (`active`, `trialing`, `past_due`, `canceled`, ...), or `none`");
const figures = {
  grossCents: z.number().int().describe('What subscribers paid'),
  platformFeeCents: z.number().int(),
  netCents: z.number().int().describe("The author's share"),
};

export const userSubscriptionResponse = z.object({
  tier: z.enum(TIERS),
  status: stripeStatus,
  currentPeriodEnd: isoOrNull,
  cancelAtPeriodEnd: z.boolean(),
  monthlyCredits: z.number(),
  limits: planLimitsResponse,
});

/** A Stripe Checkout session to send the user to. */
export const checkoutResponse = z.object({ url: z.string().describe("Stripe's checkout page"), sessionId: z.string() });
export const linkResponse = z.object({ url: z.string().describe("Stripe's page; the link is short-lived") });
/** The customer portal: the page to send the user to. */
export const portalResponse = z.object({ url: z.string().describe("Stripe's customer portal page; the link is short-lived") });

export const resourceSubscriptionResponse = z.object({
  resourceId: z.string(),
  active: z.boolean().describe('Whether calls are covered by the subscription now'),
  status: stripeStatus,
  currentPeriodEnd: isoOrNull,
  cancelAtPeriodEnd: z.boolean(),
  priceUsdMonthly: z.number(),
  trialCallsUsed: z.number().int(),
  trialCallsLeft: z.number().int(),
});

export const subscriptionCancelledResponse = z.object({
  resourceId: z.string(),
  cancelAtPeriodEnd: z.boolean().describe('The subscription ends with its current period'),
  currentPeriodEnd: isoOrNull,
});

export const earningsResponse = z.object({
  currency: z.literal('usd'),
  totals: z.object({ ...figures, paidOutCents: z.number().int(), availableCents: z.number().int().describe('Earned and not yet paid out') }),
  byResource: z.array(z.object({ resourceId: z.string(), ...figures })).describe('Highest net first'),
  byMonth: z.array(z.object({ month: z.string().describe('`YYYY-MM`'), ...figures })).describe('Newest first'),
  payouts: z.number().int().describe('How many payouts were made'),
  platformFeePercent: z.number(),
  payoutMinimumCents: z.number().int(),
});

export const authorResourcesResponse = z.object({
  resources: z.array(
    z.object({
      resourceId: z.string(),
      resourceType: z.literal('mcp'),
      name: z.string(),
      visibility: z.enum(['private', 'public']),
      authorPricing: authorPricingSchema,
      subscribers: z.number().int().describe('Subscriptions active now'),
      trialUsers: z.number().int(),
    }),
  ),
  count: z.number().int(),
});

export const connectResponse = z.object({ url: z.string().describe("Stripe's onboarding page"), accountId: z.string() });

export const connectStatusResponse = z.object({
  connected: z.boolean(),
  accountId: z.string().nullable(),
  payoutsEnabled: z.boolean(),
  chargesEnabled: z.boolean(),
  detailsSubmitted: z.boolean(),
});

const payoutStatus = z.enum(['pending', 'paid', 'failed']);

export const payoutHistoryResponse = z.object({
  payouts: z
    .array(
      z.object({
        payoutId: z.string(),
        amountCents: z.number().int(),
        status: payoutStatus,
        transferId: z.string().nullable(),
        createdAt: z.number().describe('Milliseconds since the epoch'),
      }),
    )
    .describe('Newest first'),
  count: z.number().int(),
});

export const payoutResponse = z.object({ payoutId: z.string(), amountCents: z.number().int(), transferId: z.string(), status: payoutStatus });

export const webhookReceivedResponse = z.object({
  received: z.literal(true),
  duplicate: z.boolean().describe('True when the event was delivered before and nothing was done again'),
  type: z.string().describe("The event's type"),
});
