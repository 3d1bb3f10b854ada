import * as z from 'zod';

const optionalSecret = (description: string) => z.string().min(1).optional().describe(description);

/** The billing area's settings: Stripe, the paid plans' credits, the paid-MCP fee and the payout minimum. */
export const billingSettings = {
  STRIPE_SECRET_KEY: optionalSecret('Stripe secret API key (`sk_live_...` or `sk_test_...`); without it checkout and portal answer 503 BILLING_NOT_CONFIGURED'),
  STRIPE_WEBHOOK_SECRET: optionalSecret('Signing secret of the Stripe webhook endpoint pointing at `{base_url}/stripe/webhook` (`whsec_...`)'),
  STRIPE_PRICE_STARTER: z.string().min(1).optional().describe('Stripe price id (`price_...`) of the monthly `starter` plan'),
  STRIPE_PRICE_PROFESSIONAL: z.string().min(1).optional().describe('Stripe price id (`price_...`) of the monthly `professional` plan'),
  STRIPE_API_BASE: z.url().default('https://api.stripe.com').describe("Base URL of Stripe's API (tests point it at a loopback stand-in)"),
  PLAN_STARTER_MONTHLY_CREDITS: z.coerce.number().min(0).max(100_000_000).default(2_000).describe('Credits granted once per paid period of the `starter` plan'),
  PLAN_PROFESSIONAL_MONTHLY_CREDITS: z.coerce
    .number()
    .min(0)
    .max(100_000_000)
    .default(10_000)
    .describe('Credits granted once per paid period of the `professional` plan'),
  PAID_MCP_PLATFORM_FEE_PERCENT: z.coerce
    .number()
    .min(0)
    .max(100)
    .default(20)
    .describe("The platform's share of a paid MCP server's subscription payments, in percent; the author earns the rest"),
  PAYOUT_MINIMUM_CENTS: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .default(1_000)
    .describe("Smallest available balance an author's payout transfers, in US cents"),
};
