import type { Credits } from '../core/credits.ts';
import { planLimits, type Tier } from '../core/plans.ts';

/**
 * `POST /admin/users/{userId}/tier`: the operator sets an account's plan (where Stripe is not
 * configured, or to correct it). No credits move: a paid period's grant comes from its payment.
 */
export async function setTier(userId: string, tier: Tier, ports: { readonly credits: Pick<Credits, 'setTier'> }) {
  await ports.credits.setTier(userId, tier);
  return { userId, tier, limits: planLimits(tier) };
}
