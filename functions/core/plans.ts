/**
 * The platform's plans, defined once: the tiers and what each one gives (SPEC part 8's website
 * quotas, a monthly credit grant, code-server access for starter and up). A kernel module, so the
 * areas whose limits depend on the tier (websites, billing, next the code server) read the same
 * table without bundling each other's code.
 */

export const TIERS = ['free', 'starter', 'professional'] as const;
export type Tier = (typeof TIERS)[number];

export interface PlanLimits {
  /** Credits granted once per paid period (for `free`, the calendar month's free credits). */
  readonly monthlyCredits: number;
  /** Website storage, in MiB (SPEC part 8). */
  readonly websiteQuotaMb: number;
  /** Whether the plan includes a code server (SPEC 4.12: starter and up). */
  readonly codeServer: boolean;
}

/** The settings that change a plan's figures; each defaults to the table below when absent. */
export interface PlanSettings {
  readonly MONTHLY_FREE_CREDITS?: number;
  readonly PLAN_STARTER_MONTHLY_CREDITS?: number;
  readonly PLAN_PROFESSIONAL_MONTHLY_CREDITS?: number;
  readonly WEBSITE_FREE_QUOTA_MB?: number;
}

/** The plans' defaults: the one place their figures are written. */
export const PLANS: Readonly<Record<Tier, PlanLimits>> = Object.freeze({
  free: { monthlyCredits: 0, websiteQuotaMb: 50, codeServer: false },
  starter: { monthlyCredits: 2_000, websiteQuotaMb: 1024, codeServer: true },
  professional: { monthlyCredits: 10_000, websiteQuotaMb: 10 * 1024, codeServer: true },
});

export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && (TIERS as readonly string[]).includes(value);
}

/** What `tier` gives, with the operator's settings applied. */
export function planLimits(tier: Tier, settings: PlanSettings = {}): PlanLimits {
  const plan = PLANS[tier];
  const credits: Record<Tier, number | undefined> = {
    free: settings.MONTHLY_FREE_CREDITS,
    starter: settings.PLAN_STARTER_MONTHLY_CREDITS,
    professional: settings.PLAN_PROFESSIONAL_MONTHLY_CREDITS,
  };
  return {
    monthlyCredits: credits[tier] ?? plan.monthlyCredits,
    websiteQuotaMb: tier === 'free' ? (settings.WEBSITE_FREE_QUOTA_MB ?? plan.websiteQuotaMb) : plan.websiteQuotaMb,
    codeServer: plan.codeServer,
  };
}

/**
 * The tier of an account: its stored item's `tier` (written only by the credits port, with the
 * paid period's grant), or of an actor whose account auth read in this request. `free` when there
 * is none or it is not a tier, so an account never reads as more than it paid for.
 */
export function tierOf(user: { readonly tier?: unknown } | { readonly account?: { readonly item: object } } | null | undefined): Tier {
  if (user === null || user === undefined) return 'free';
  const item: { tier?: unknown } = 'account' in user ? ((user.account?.item ?? {}) as { tier?: unknown }) : (user as { tier?: unknown });
  return isTier(item.tier) ? item.tier : 'free';
}
